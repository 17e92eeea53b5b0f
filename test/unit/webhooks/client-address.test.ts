/**
 * TRUST_PROXY: which address a delivery is counted against. Off, the socket's; a hop count, the
 * address that many trusted hops back; ranges, the first address outside them. What a client
 * writes in X-Forwarded-For itself is never taken, and a bad value is refused with a reason.
 */
import { describe, expect, it } from 'vitest';
import {
  clientAddress,
  limitedSource,
  parseTrustProxy,
  type TrustProxy,
} from '../../../src/http/client-address.js';

function trust(value: string): TrustProxy {
  const parsed = parseTrustProxy(value);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('the client address behind a proxy', () => {
  it("off, it is the socket's whatever the headers say", () => {
    expect(clientAddress('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }, undefined)).toBe(
      '127.0.0.1',
    );
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }, trust('0'))).toBe('127.0.0.1');
  });

  it('a hop count takes the address that many hops back, never what the client wrote', () => {
    const headers = { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' };
    expect(clientAddress('127.0.0.1', headers, trust('1'))).toBe('203.0.113.7');
    expect(clientAddress('127.0.0.1', headers, trust('2'))).toBe('198.51.100.1');
    expect(clientAddress('127.0.0.1', {}, trust('1'))).toBe('127.0.0.1');
    // A hop that is not an address: the proxy's peer is the client.
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': 'unknown' }, trust('1'))).toBe('127.0.0.1');
  });

  it('ranges trust every hop inside them; Forwarded is read when there is no X-Forwarded-For', () => {
    const ranges = trust('127.0.0.1, 10.0.0.0/8, fd00::/8');
    expect(clientAddress('127.0.0.1', { 'x-forwarded-for': '1.2.3.4, 203.0.113.7, 10.1.2.3' }, ranges)).toBe(
      '203.0.113.7',
    );
    expect(clientAddress('192.0.2.1', { 'x-forwarded-for': '203.0.113.7' }, ranges)).toBe('192.0.2.1');
    expect(
      clientAddress(
        '127.0.0.1',
        { forwarded: 'for=192.0.2.60;proto=https, for="[2001:db8::17]:4711"' },
        ranges,
      ),
    ).toBe('2001:db8::17');
    expect(clientAddress('fd00::1', { 'x-forwarded-for': '[2001:db8::9]:80' }, ranges)).toBe('2001:db8::9');
  });

  it('refuses a value that is neither', () => {
    for (const bad of ['11', 'true', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/8', ',']) {
      expect(typeof parseTrustProxy(bad)).toBe('string');
    }
    expect(parseTrustProxy('')).toEqual(expect.any(String));
  });
});

describe('the source a limit is kept for', () => {
  it('groups IPv6 addresses by their /64, so one subscriber cannot take a fresh limit per address', () => {
    const a = limitedSource('2001:db8:1:2::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(limitedSource('2001:0db8:0001:0002:ffff:eeee:dddd:cccc')).toBe(a);
    expect(limitedSource('2001:db8:1:2:0:0:0:abcd%eth0')).toBe(a);
    // `::` in the first half: the zeros it stands for are expanded before the prefix is taken.
    expect(limitedSource('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(limitedSource('2001:db8::1:0:0:1')).toBe('2001:db8:0:0::/64');
    expect(limitedSource('2001:db8::2:1:0:0:1')).toBe('2001:db8:0:2::/64');
    expect(limitedSource('::1')).toBe('0:0:0:0::/64');
  });

  it('keeps other /64s apart', () => {
    expect(limitedSource('2001:db8:1:3::1')).not.toBe(limitedSource('2001:db8:1:2::1'));
    expect(limitedSource('2001:db8:2:2::1')).not.toBe(limitedSource('2001:db8:1:2::1'));
  });

  it('leaves IPv4 as it is, and takes an IPv4 address written as IPv6 for the IPv4 address', () => {
    expect(limitedSource('203.0.113.7')).toBe('203.0.113.7');
    expect(limitedSource('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(limitedSource('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(limitedSource('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(limitedSource('?')).toBe('?');
  });
});

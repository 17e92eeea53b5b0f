/**
 * The library entry (`directory-bot/directory`): what a user of the client imports. It names the
 * client, its options, records and errors; the rate limiter, the endpoint table and the parsing
 * helpers stay inside, and the client's limiter cannot be reached or replaced from outside.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import * as entry from '../../src/directory/index.js';
import { type Emulator, startEmulator } from '../emulator/index.js';

const read = (name: string) => readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8');

let emu: Emulator | undefined;
let client: entry.DirectoryClient | undefined;
afterEach(async () => {
  await client?.close();
  await emu?.close();
  client = undefined;
  emu = undefined;
});

describe('the directory library entry', () => {
  it('exports the client, its errors and the reference parser by name, nothing internal', () => {
    expect(Object.keys(entry).sort()).toEqual(
      [
        'API_VERSIONS',
        'BadRequestError',
        'DEFAULT_API_VERSION',
        'DEFAULT_BASE_URL',
        'DEFAULT_RATE_LIMITS',
        'DirectoryClient',
        'DirectoryError',
        'ForbiddenError',
        'InvalidArgumentError',
        'InvalidResponseError',
        'KNOWN_NOTIFY_TYPES',
        'LOOKUP_CACHE_DEFAULTS',
        'NotFoundError',
        'NotificationsClient',
        'PUBLISHED_LIMITS',
        'RateLimitedError',
        'TOKEN_KINDS',
        'TokenKindNotAcceptedError',
        'UnauthorizedError',
        'UnavailableError',
        'V3_ERROR_CODES',
        'isDirectoryError',
        'isShortCode',
        'isSnowflake',
        'notifyEventKey',
        'parseNotifyWebhook',
        'parseReference',
      ].sort(),
    );
  });

  it('has every name the documentation example imports, and package.json points at it', () => {
    const page = read('docs/client-library.md');
    const imports = [...page.matchAll(/import \{([^}]+)\} from 'directory-bot\/directory'/g)];
    expect(imports.length).toBeGreaterThan(0);
    for (const match of imports) {
      for (const name of (match[1] ?? '').split(',').map((n) => n.trim())) {
        if (name && !name.startsWith('type ')) expect(entry, name).toHaveProperty(name);
      }
    }
    // The methods the example calls and the page lists are the client's.
    const called = [...page.matchAll(/\bdirectory\.(\w+)\(/g)].map((m) => m[1] ?? '');
    const listed = [
      ...(page.match(/^- Every method of the interface[^:]*:([^.]+)\./m)?.[1] ?? '').matchAll(/`(\w+)`/g),
    ].map((m) => m[1] ?? '');
    expect(called.length).toBeGreaterThan(0);
    expect(listed.length).toBeGreaterThan(10);
    for (const name of [...called, ...listed]) {
      expect(typeof Reflect.get(entry.DirectoryClient.prototype, name), name).toBe('function');
    }
    const pkg = JSON.parse(read('package.json')) as { exports: Record<string, { default: string }> };
    expect(pkg.exports['./directory']?.default).toBe('./dist/src/directory/index.js');
  });

  it('reports rate-limit waits through a constructor hook; the limiter itself is not reachable', async () => {
    emu = await startEmulator();
    const grants: entry.GrantInfo[] = [];
    client = new entry.DirectoryClient({
      baseUrl: emu.url,
      version: 'v2',
      rateLimits: { global: { max: 1, windowMs: 300 }, marginMs: 0 },
      onRateLimitGrant: (info) => grants.push(info),
    });
    expect(client).not.toHaveProperty('limiter');
    const first = client.getBot('kerdoku');
    const second = client.getBot('kerdoku', { priority: 'background' });
    // The second waits for the first one's window.
    expect(client.waiting).toBe(1);
    await Promise.all([first, second]);
    expect(client.waiting).toBe(0);
    expect(grants.map((g) => g.priority)).toEqual(['interactive', 'background']);
    expect(grants[1]?.waitedMs).toBeGreaterThan(0);
  });
});

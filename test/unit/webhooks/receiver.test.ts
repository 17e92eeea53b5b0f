/**
 * The webhook receiver's limits on loopback, against a store stand-in: the per-source limit cuts a
 * flood off before the store is asked (and one server's flood leaves another alone), a store that
 * is down is answered 503 so the directory may try again, and the key never reaches a log line.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/features/webhooks/receiver.js';
import { createLogger } from '../../../src/log/logger.js';
import { StoreUnavailableError } from '../../../src/store/index.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';
const KEY = 'hk_receiver-unit-key';

describe('the webhook receiver', () => {
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  async function start(options: { enqueueFails?: boolean; limit?: { max: number; windowMs: number } } = {}) {
    const lines: string[] = [];
    const calls = { check: 0, enqueue: 0 };
    const logger = createLogger({
      level: 'debug',
      destination: { write: (line: string) => lines.push(line) },
    });
    receiver = await startWebhookReceiver({
      port: 0,
      host: '127.0.0.1',
      logger,
      rateLimit: options.limit ?? { max: 3, windowMs: 60_000 },
      webhooks: {
        async check(_guildId, key) {
          calls.check += 1;
          return key === KEY
            ? {
                kind: 'ok',
                setup: { guildId: GUILD, channelId: '1', problem: null, lastEventAt: null, updatedAt: 0 },
              }
            : { kind: 'wrong' };
        },
        async enqueue() {
          calls.enqueue += 1;
          if (options.enqueueFails)
            throw new StoreUnavailableError('The database is unavailable: connection refused');
          return 'stored';
        },
      },
    });
    const deliver = async (guildId: string, key = KEY) => {
      const res = await request(`http://127.0.0.1:${receiver!.port}/hooks/directory/${guildId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'x-hook-key': key },
        body: JSON.stringify({ type: 'test_webhook_message', data: { hello: true, world: true } }),
      });
      await res.body.dump();
      return { status: res.statusCode, retryAfter: res.headers['retry-after'] };
    };
    return { deliver, calls, lines };
  }

  it('cuts a flood of one source at one server off before the store is asked; other servers go on', async () => {
    const { deliver, calls } = await start();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await deliver(GUILD, i % 2 ? 'guess' : KEY)).status);
    expect(statuses).toEqual([200, 401, 200, 429, 429]);
    expect(calls.check).toBe(3);
    const limited = await deliver(GUILD);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    expect((await deliver(OTHER)).status).toBe(200);
  });

  it('answers 503 when the store cannot keep the event, so the directory may deliver it again', async () => {
    const { deliver, calls, lines } = await start({ enqueueFails: true });
    expect(await deliver(GUILD)).toMatchObject({ status: 503, retryAfter: '5' });
    expect(calls.enqueue).toBe(1);
    expect(lines.some((l) => l.includes('could not be stored'))).toBe(true);
    expect(lines.join('\n')).not.toContain(KEY);
    expect(lines.join('\n')).not.toContain('guess');
  });
});

/**
 * The webhook receiver's v3 path (features/webhooks/receiver.ts) on loopback, against the real
 * webhook events of a SQLite store: BotiCord v3's HTTPS webhook body (`{type, payload, id, user,
 * happened, webhookSettings}`), sent as BotiCord sends it (X-Boticord-Token: the owner's own API
 * key; X-Boticord-Affected; the admin's X-Hook-Key as a custom header), is stored once and answered
 * 200 (the same body again: 200, 'duplicate'); a body about another server is refused 400; neither
 * the X-Boticord-Token header nor `webhookSettings.token` reaches a log line or the stored row; the
 * test button's body (type `none`) stores the "webhook connected" event; an unknown type is
 * answered 200 and not stored.
 */
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type DeliveryOutcome,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../src/features/webhooks/receiver.js';
import { createLogger } from '../../src/log/logger.js';
import { type Store, WebhookRepository } from '../../src/store/index.js';
import { freshStore } from '../store/places.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';
const BOT = '974297735559806986';
const ANNA = '511887819153866762';
const HOOK_KEY = 'hk_v3-receiver-key-5c7e';
/** The owner's API key, which BotiCord puts in X-Boticord-Token and in webhookSettings.token. */
const OWNER_KEY = 'boticord-owner-api-key-0a1b2c3d4e5f';
const SETTINGS_TOKEN = 'boticord-settings-token-6f7e8d9c';
const NOW = Date.UTC(2026, 10, 25, 12);

function v3Body(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'up_added',
    payload: { upCount: 1 },
    id: GUILD,
    user: ANNA,
    happened: NOW - 2_000,
    webhookSettings: {
      enabled: true,
      headers: { 'X-Hook-Key': HOOK_KEY },
      url: `https://bot.example/hooks/directory/${GUILD}`,
      token: SETTINGS_TOKEN,
    },
    ...over,
  };
}

describe("the webhook receiver's v3 path", () => {
  let store: Store;
  let done: () => Promise<void>;
  let receiver: WebhookReceiver | undefined;
  let lines: string[];
  let outcomes: DeliveryOutcome[];
  let storedFor: string[];

  beforeEach(async () => {
    ({ store, done } = await freshStore('sqlite'));
    const webhooks = new WebhookRepository(store);
    await webhooks.configure(GUILD, HOOK_KEY, '1000', NOW - 60_000);
    await webhooks.configure(OTHER, `${HOOK_KEY}-other`, '1001', NOW - 60_000);
    lines = [];
    outcomes = [];
    storedFor = [];
    receiver = await startWebhookReceiver({
      port: 0,
      host: '127.0.0.1',
      webhooks,
      botId: BOT,
      now: () => NOW,
      logger: createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } }),
      rateLimit: { max: 100, windowMs: 60_000 },
      onDelivery: (outcome) => outcomes.push(outcome),
      onStored: (guildId) => storedFor.push(guildId),
    });
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await done();
  });

  /** Posts `body` as BotiCord's v3 webhook does, to the URL of `guildId`. */
  async function deliver(body: unknown, guildId = GUILD, key = HOOK_KEY): Promise<number> {
    const res = await request(`http://127.0.0.1:${receiver!.port}/hooks/directory/${guildId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hook-key': key,
        'x-boticord-token': OWNER_KEY,
        'x-boticord-affected': String((body as { id?: unknown }).id ?? guildId),
      },
      body: JSON.stringify(body),
    });
    await res.body.dump();
    return res.statusCode;
  }

  const rows = () =>
    store.run((db) => db.selectFrom('webhook_events').selectAll().orderBy('received_at').execute());

  /** Neither the header's key nor the settings' token, anywhere it could be kept. */
  async function expectNoKeys(): Promise<void> {
    const everything = [...lines, JSON.stringify(await rows())].join('\n');
    expect(everything).not.toContain(OWNER_KEY);
    expect(everything).not.toContain(SETTINGS_TOKEN);
    expect(everything).not.toContain(HOOK_KEY);
    expect(everything).not.toContain('webhookSettings');
  }

  it('stores an up once and answers 200; the same body again is a 200 duplicate', async () => {
    expect(await deliver(v3Body())).toBe(200);
    expect(await deliver(v3Body())).toBe(200);
    expect(outcomes).toEqual(['stored', 'duplicate']);
    expect(storedFor).toEqual([GUILD]);
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      id: `${GUILD}:v3:up_added:${GUILD}:${ANNA}:${NOW - 2_000}`,
      guild_id: GUILD,
      type: 'up_added',
      state: 'pending',
    });
    expect(JSON.parse(stored[0]!.payload)).toEqual({
      kind: 'bump',
      userId: ANNA,
      at: NOW - 2_000,
      bonus: null,
      upCount: 1,
      via: 'webhook',
      v3: true,
    });
    await expectNoKeys();
  });

  it('keeps only the checked fields of a review, never the keys', async () => {
    const body = v3Body({
      type: 'comment_added',
      payload: { content: 'Nice place', rating: 5, token: OWNER_KEY, extra: SETTINGS_TOKEN },
      secret: OWNER_KEY,
    });
    expect(await deliver(body)).toBe(200);
    expect(outcomes).toEqual(['stored']);
    const [row] = await rows();
    expect(JSON.parse(row!.payload)).toMatchObject({
      kind: 'comment',
      change: 'new',
      text: { new: 'Nice place' },
      rating: 5,
    });
    await expectNoKeys();
  });

  it("refuses 400 a body whose id is another server than the URL's, and stores nothing", async () => {
    expect(await deliver(v3Body({ id: OTHER }))).toBe(400);
    // The other server's own URL with this server's key is not the way in either.
    expect(await deliver(v3Body({ id: OTHER }), OTHER)).toBe(401);
    expect(outcomes).toEqual(['invalid', 'bad-key']);
    expect(await rows()).toEqual([]);
    expect(storedFor).toEqual([]);
    await expectNoKeys();
  });

  it('refuses 400 a body whose ids are not snowflakes or whose time is in the future', async () => {
    expect(await deliver(v3Body({ user: '../../x' }))).toBe(400);
    expect(await deliver(v3Body({ happened: NOW + 3_600_000 }))).toBe(400);
    expect(await rows()).toEqual([]);
  });

  it("stores the test button's body (type none) as the 'webhook connected' event", async () => {
    expect(await deliver(v3Body({ type: 'none', payload: {}, user: '0' }))).toBe(200);
    expect(outcomes).toEqual(['stored']);
    const [row] = await rows();
    expect(row).toMatchObject({ type: 'test_webhook_message', guild_id: GUILD });
    expect(JSON.parse(row!.payload)).toEqual({ kind: 'test' });
    // Pressed again within the window: one event.
    expect(await deliver(v3Body({ type: 'none', payload: {} }))).toBe(200);
    expect(outcomes).toEqual(['stored', 'duplicate']);
    await expectNoKeys();
  });

  it('answers an unknown type 200 and stores nothing', async () => {
    expect(await deliver(v3Body({ type: 'boost_added' }))).toBe(200);
    expect(outcomes).toEqual(['ignored']);
    expect(await rows()).toEqual([]);
    expect(storedFor).toEqual([]);
    await expectNoKeys();
  });

  it('still takes a v2 body beside v3 ones', async () => {
    const v2 = { type: 'test_webhook_message', data: { hello: true } };
    expect(await deliver(v2)).toBe(200);
    expect(outcomes).toEqual(['stored']);
  });

  it('refuses the owner key sent as X-Hook-Key (the key BotiCord echoes is no secret of ours)', async () => {
    expect(await deliver(v3Body(), GUILD, OWNER_KEY)).toBe(401);
    expect(await rows()).toEqual([]);
    await expectNoKeys();
  });
});

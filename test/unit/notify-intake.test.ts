/**
 * The intake of the directory's v3 notifications (features/notifications/intake.ts): the row a
 * notification becomes, whichever way it came (the WebSocket's frame, the HTTPS webhook's body),
 * is the same row, so the same up told both ways is stored once; an event of the bot's own page and
 * a type the bot does not act on are not stored; what the webhook carries of the sender's API key
 * (`webhookSettings.token`) never reaches the row; and `take` stores, tells and counts each once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type NotifyEvent, parseNotifyFrame, parseNotifyWebhook } from '../../src/directory/v3/notify.js';
import {
  type IntakeOutcome,
  type NotifyVia,
  notificationIntake,
  storedNotification,
} from '../../src/features/notifications/intake.js';
import { DirectoryEventHandler } from '../../src/features/webhooks/handle.js';
import { emptyHandlerOptions } from '../support/announcer.js';

const GUILD = '722424773233213460';
const BOT = '974297735559806986';
const ANNA = '511887819153866762';
const HAPPENED = 1_688_322_825_141;
const NOW = HAPPENED + 60_000;
const OWNER_KEY = 'owner-api-key-9f8e7d6c5b4a';
const FIXTURES = join(import.meta.dirname, '../fixtures/directory-v3');

function event(over: Partial<NotifyEvent> = {}): NotifyEvent {
  return {
    type: 'up_added',
    affected: GUILD,
    user: ANNA,
    happened: HAPPENED,
    payload: { upCount: 2, content: null, rating: null },
    ...over,
  };
}

/** The same event as the WebSocket sends it and as the webhook posts it (with the owner's key). */
function bothWays(data: { type: string; payload: unknown }): { ws: NotifyEvent; hook: NotifyEvent } {
  const frame = JSON.stringify({
    event: 'notify',
    data: { ...data, affected: GUILD, user: ANNA, happened: HAPPENED },
  });
  const body = {
    ...data,
    id: GUILD,
    user: ANNA,
    happened: HAPPENED,
    webhookSettings: { enabled: true, headers: { 'X-Hook-Key': 'hk_secret' }, url: null, token: OWNER_KEY },
  };
  const ws = parseNotifyFrame(frame, NOW);
  const hook = parseNotifyWebhook(body, NOW);
  if (ws.kind !== 'notify' || hook.kind !== 'notify') throw new Error('the fixtures did not parse');
  return { ws: ws.event, hook: hook.event };
}

function stored(e: NotifyEvent, via: NotifyVia, botId: string | undefined = BOT) {
  const row = storedNotification(e, via, botId);
  if ('ignored' in row) throw new Error(`ignored: ${row.ignored}`);
  return row;
}

describe('storedNotification', () => {
  it.each([
    ['up_added', { upCount: 3 }],
    ['comment_added', { content: 'Great server', rating: 5 }],
    ['comment_edited', { content: 'Good server', rating: 4 }],
    ['comment_removed', { content: 'Good server', rating: 4 }],
  ])('gives %s the same id over the WebSocket and the webhook', (type, payload) => {
    const { ws, hook } = bothWays({ type, payload });
    const a = stored(ws, 'notify');
    const b = stored(hook, 'webhook');
    expect(a.id).toBe(b.id);
    expect(a.id).toBe(`${GUILD}:v3:${type}:${GUILD}:${ANNA}:${HAPPENED}`);
    expect(a.guildId).toBe(GUILD);
    expect(b.guildId).toBe(GUILD);
    expect(a.type).toBe(type);
    // Only how it came differs (an up says so; the history's source follows it).
    const { via: viaA, ...restA } = JSON.parse(a.payload) as Record<string, unknown>;
    const { via: viaB, ...restB } = JSON.parse(b.payload) as Record<string, unknown>;
    expect(restA).toEqual(restB);
    if (type === 'up_added') expect([viaA, viaB]).toEqual(['notify', 'webhook']);
  });

  it('the published webhook body (fixture) and its WebSocket twin are one row, without the key', () => {
    const body = JSON.parse(readFileSync(join(FIXTURES, 'webhook-up_added.constructed.json'), 'utf8')) as {
      id: string;
      user: string;
      happened: number;
      webhookSettings: { token: string };
    };
    const hook = parseNotifyWebhook(body, body.happened + 1_000);
    expect(hook.kind).toBe('notify');
    if (hook.kind !== 'notify') return;
    const row = stored(hook.event, 'webhook');
    expect(row.id).toBe(`${body.id}:v3:up_added:${body.id}:${body.user}:${body.happened}`);
    const text = JSON.stringify(row);
    expect(text).not.toContain(body.webhookSettings.token);
    expect(text).not.toContain('webhookSettings');
  });

  it("keeps the webhook's webhookSettings and its token out of the row, whatever the payload holds", () => {
    const { hook } = bothWays({
      type: 'comment_added',
      payload: { content: 'Nice', rating: 5, token: OWNER_KEY, webhookSettings: { token: OWNER_KEY } },
    });
    const row = stored(hook, 'webhook');
    const text = JSON.stringify(row);
    expect(text).not.toContain(OWNER_KEY);
    expect(text).not.toContain('webhookSettings');
    expect(text).not.toContain('hk_secret');
    expect(JSON.parse(row.payload)).toEqual({
      kind: 'comment',
      change: 'new',
      userId: ANNA,
      at: HAPPENED,
      vote: { old: null, new: null },
      text: { old: null, new: 'Nice' },
      reason: null,
      rating: 5,
      v3: true,
    });
  });

  it('turns an up into a bump with its count and how it came', () => {
    expect(JSON.parse(stored(event(), 'notify').payload)).toEqual({
      kind: 'bump',
      userId: ANNA,
      at: HAPPENED,
      bonus: null,
      upCount: 2,
      via: 'notify',
      v3: true,
    });
  });

  it('tells a removal by its old text, an edit by its new one', () => {
    const removed = stored(
      event({ type: 'comment_removed', payload: { upCount: null, content: 'bye', rating: 1 } }),
      'notify',
    );
    expect(JSON.parse(removed.payload)).toMatchObject({
      change: 'delete',
      text: { old: 'bye', new: null },
      rating: 1,
    });
    const edited = stored(
      event({ type: 'comment_edited', payload: { upCount: null, content: 'hi', rating: null } }),
      'notify',
    );
    expect(JSON.parse(edited.payload)).toMatchObject({
      change: 'edit',
      text: { old: null, new: 'hi' },
      rating: null,
    });
  });

  it("ignores events of the bot's own page, whichever way they come", () => {
    for (const type of ['up_added', 'comment_added', 'comment_removed']) {
      expect(storedNotification(event({ type, affected: BOT }), 'notify', BOT)).toEqual({ ignored: 'bot' });
      expect(storedNotification(event({ type, affected: BOT }), 'webhook', BOT)).toEqual({ ignored: 'bot' });
    }
    // Without a known bot id, the same event is a resource's like any other.
    expect('id' in storedNotification(event({ affected: BOT }), 'notify', undefined)).toBe(true);
  });

  it('ignores types it does not act on', () => {
    for (const type of [
      'boost_added',
      'up_removed',
      'comment_pinned',
      'none',
      'test_webhook_message',
      'up',
    ]) {
      expect(storedNotification(event({ type }), 'notify', BOT)).toEqual({ ignored: 'unknown' });
      expect(storedNotification(event({ type }), 'webhook', BOT)).toEqual({ ignored: 'unknown' });
    }
  });
});

describe('notificationIntake', () => {
  function intake() {
    const rows = new Map<string, { guildId: string; type: string; payload: string; receivedAt: number }>();
    const woken: string[] = [];
    const outcomes: [string, NotifyVia, IntakeOutcome][] = [];
    const take = notificationIntake({
      webhooks: {
        async enqueue(e) {
          if (rows.has(e.id)) return 'duplicate';
          rows.set(e.id, e);
          return 'stored';
        },
      },
      botId: BOT,
      now: () => NOW,
      onStored: (guildId) => woken.push(guildId),
      onOutcome: (type, via, outcome) => outcomes.push([type, via, outcome]),
    });
    return { take, rows, woken, outcomes };
  }

  it('stores an event once, however often and whichever way it comes; wakes the announcer once', async () => {
    const { take, rows, woken, outcomes } = intake();
    const { ws, hook } = bothWays({ type: 'up_added', payload: { upCount: 1 } });
    expect(await take.take(ws, 'notify')).toBe('stored');
    expect(await take.take(ws, 'notify')).toBe('duplicate');
    expect(await take.take(hook, 'webhook')).toBe('duplicate');
    expect(rows.size).toBe(1);
    expect([...rows.values()][0]).toMatchObject({ guildId: GUILD, type: 'up_added', receivedAt: NOW });
    expect(woken).toEqual([GUILD]);
    expect(outcomes).toEqual([
      ['up_added', 'notify', 'stored'],
      ['up_added', 'notify', 'duplicate'],
      ['up_added', 'webhook', 'duplicate'],
    ]);
  });

  it('stores nothing for an unknown type or the bot itself, and counts them as ignored', async () => {
    const { take, rows, woken, outcomes } = intake();
    expect(await take.take(event({ type: 'boost_added' }), 'notify')).toBe('ignored');
    expect(await take.take(event({ affected: BOT }), 'webhook')).toBe('ignored');
    expect(rows.size).toBe(0);
    expect(woken).toEqual([]);
    expect(outcomes).toEqual([
      ['boost_added', 'notify', 'ignored'],
      ['up_added', 'webhook', 'ignored'],
    ]);
  });

  it("throws the store's error (the connection tries again) and wakes nobody", async () => {
    const woken: string[] = [];
    const take = notificationIntake({
      webhooks: {
        async enqueue() {
          throw new Error('the database is unavailable');
        },
      },
      botId: BOT,
      now: () => NOW,
      onStored: (guildId) => woken.push(guildId),
    });
    await expect(take.take(event(), 'notify')).rejects.toThrow('unavailable');
    expect(woken).toEqual([]);
  });
});

describe("a review of a server with no channel for the directory's announcements", () => {
  it("is done with nothing posted (v3: a server of the key's account that set none), not a failure", async () => {
    const calls: string[] = [];
    const rest = new Proxy(
      {},
      {
        get: (_target, name) => () => {
          calls.push(String(name));
          throw new Error('Discord was asked');
        },
      },
    );
    const handler = new DirectoryEventHandler(emptyHandlerOptions({ rest: rest as never }));
    const review = (v3: boolean) => ({
      kind: 'comment',
      change: 'new',
      userId: ANNA,
      at: HAPPENED,
      vote: { old: null, new: null },
      text: { old: null, new: 'Отличный сервер' },
      reason: null,
      ...(v3 ? { rating: 5, v3: true } : {}),
    });
    const stored = (v3: boolean) => ({
      id: `${GUILD}:${v3 ? 'v3' : 'v2'}`,
      guildId: GUILD,
      type: v3 ? 'comment_added' : 'new_server_comment',
      payload: JSON.stringify(review(v3)),
      receivedAt: NOW,
      state: 'claimed' as const,
      nonce: 'nonce-1',
      failure: null,
      traceParent: null,
    });
    const claim = { id: 'x', by: 'me', nonce: 'nonce-1', expiresAt: NOW + 60_000 };
    expect(await handler.handle(stored(true), claim)).toEqual({ kind: 'sent' });
    // v2's webhook was set up once (its events come only then): turned off since, it is said.
    expect(await handler.handle(stored(false), claim)).toEqual({ kind: 'failed', reason: 'webhook-off' });
    expect(calls).toEqual([]);
  });
});

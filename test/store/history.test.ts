/**
 * The up history on both engines: each up recorded once, a server's members ranked for a period,
 * old ups pruned (and, by the pruner, the old webhook events with them), a server's history gone
 * with its settings.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { historyPruner } from '../../src/features/history/prune.js';
import {
  HistoryRepository,
  SettingsRepository,
  type Store,
  type UpRecord,
  WebhookRepository,
} from '../../src/store/index.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';
const ANNA = '310000000000000001';
const BORIS = '310000000000000002';
const VERA = '310000000000000003';
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 24);

let n = 0;
const up = (userId: string, at: number, guildId = GUILD): UpRecord => ({
  id: `bot:${++n}`,
  guildId,
  userId,
  at,
  upCount: 100 + n,
  source: 'bot',
});

describe.each(ENGINES)('the up history (%s)', (engine) => {
  let store: Store;
  let done: () => Promise<void>;
  let history: HistoryRepository;

  beforeEach(async () => {
    ({ store, done } = await freshStore(engine));
    history = new HistoryRepository(store);
  });
  afterEach(() => done());

  it('records an up once: the same id again (a recovery after a restart) is not a second up', async () => {
    const first = up(ANNA, NOW - DAY);
    expect(await history.record(first)).toBe(true);
    expect(await history.record({ ...first, at: NOW })).toBe(false);
    expect(await history.members(GUILD, 0)).toEqual([{ userId: ANNA, ups: 1, firstAt: NOW - DAY }]);
  });

  it("ranks a server's members by ups in the period; equal counts, who began first", async () => {
    for (const at of [NOW - 2 * DAY, NOW - DAY, NOW - 3_600_000]) await history.record(up(BORIS, at));
    for (const at of [NOW - 3 * DAY, NOW - DAY]) await history.record(up(ANNA, at));
    for (const at of [NOW - 2 * DAY, NOW - 1_000]) await history.record(up(VERA, at));
    // Older than the week, and another server's: not counted.
    await history.record(up(VERA, NOW - 10 * DAY));
    await history.record(up(ANNA, NOW - DAY, OTHER));
    expect(await history.members(GUILD, NOW - 7 * DAY)).toEqual([
      { userId: BORIS, ups: 3, firstAt: NOW - 2 * DAY },
      { userId: ANNA, ups: 2, firstAt: NOW - 3 * DAY },
      { userId: VERA, ups: 2, firstAt: NOW - 2 * DAY },
    ]);
    expect((await history.members(GUILD, 0)).map((m) => [m.userId, m.ups])).toEqual([
      [VERA, 3],
      [BORIS, 3],
      [ANNA, 2],
    ]);
  });

  it('prunes what is older than the retention, and goes with the settings when the bot leaves', async () => {
    await history.record(up(ANNA, NOW - 401 * DAY));
    await history.record(up(ANNA, NOW - 399 * DAY));
    await history.record(up(BORIS, NOW - DAY, OTHER));
    expect(await history.prune(NOW - 400 * DAY)).toBe(1);
    expect(await history.members(GUILD, 0)).toEqual([{ userId: ANNA, ups: 1, firstAt: NOW - 399 * DAY }]);
    await new SettingsRepository(store).deleteGuild(GUILD);
    expect(await history.members(GUILD, 0)).toEqual([]);
    expect(await history.members(OTHER, 0)).toHaveLength(1);
  });

  it('the pruner deletes, once started, the ups and the webhook events past their retention, and says how many', async () => {
    const webhooks = new WebhookRepository(store);
    await history.record(up(ANNA, NOW - 401 * DAY));
    await history.record(up(BORIS, NOW - 402 * DAY));
    await history.record(up(ANNA, NOW - 399 * DAY));
    // The one still waiting is another server's: a server's events are announced in order, so
    // one of this server's could not be done while an earlier one waits.
    const event = (id: string, days: number) => ({
      id,
      guildId: id === 'waiting' ? OTHER : GUILD,
      type: 'new_server_comment',
      payload: '{}',
      receivedAt: NOW - days * DAY,
    });
    for (const [id, days] of [
      ['old', 15],
      ['recent', 13],
      ['waiting', 15],
    ] as const) {
      await webhooks.enqueue(event(id, days));
    }
    for (const id of ['old', 'recent']) {
      const claim = await webhooks.claim(id, 'p', 1_000, NOW);
      await webhooks.finish(claim!, 'done', null, NOW);
    }
    const lines: { msg: string; deleted?: number; days?: number }[] = [];
    const logger = pino({ base: null }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const pruner = historyPruner({ history, webhooks, logger, now: () => NOW });
    pruner.start();
    try {
      await vi.waitFor(() => expect(lines).toHaveLength(2));
    } finally {
      await pruner.stop();
    }
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'old ups deleted from the history', deleted: 2, days: 400 }),
      expect.objectContaining({ msg: 'old webhook events deleted', deleted: 1 }),
    ]);
    expect(await history.members(GUILD, 0)).toEqual([{ userId: ANNA, ups: 1, firstAt: NOW - 399 * DAY }]);
    expect(await webhooks.getEvent('old')).toBeUndefined();
    expect(await webhooks.getEvent('recent')).toBeDefined();
    // Not announced yet: kept, however old.
    expect(await webhooks.getEvent('waiting')).toBeDefined();
  });
});

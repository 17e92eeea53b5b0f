import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { recoverPendingUps } from '../../src/features/up/recover.js';
import { createLogger } from '../../src/log/logger.js';
import { openStore, Store, StoreError, StoreUpJournal, TOKEN_LIFETIME_MS } from '../../src/store/index.js';
import type { PendingUp } from '../../src/store/journal.js';
import { ENGINES, freshStore, type Place } from './places.js';

const NOW = 1_700_000_000_000;

const entry = (id: string, createdAt = NOW): PendingUp => ({
  interactionId: id,
  token: `interaction-token-${id}`,
  applicationId: '1000000000000000001',
  guildId: '722424773233213460',
  // The server's language is kept apart from the presser's: an answer after a restart needs both.
  guildLocale: 'uk',
  channelId: '722424773233213461',
  channelName: 'général «test»',
  userId: '525366699969478676',
  locale: 'ru',
  createdAt,
});

const ids = async (journal: StoreUpJournal): Promise<string[]> =>
  (await journal.list()).map((e) => e.interactionId).sort((a, b) => Number(a) - Number(b));

describe.each(ENGINES)('the journal of ups in flight in the store (%s)', (engine) => {
  let store: Store;
  let place: Place;
  let another: () => Promise<Store>;
  let done: () => Promise<void>;
  const now = () => NOW;

  beforeEach(async () => {
    ({ store, place, another, done } = await freshStore(engine));
  });
  afterEach(() => done());

  it('keeps entries across a restart, exactly as given, and forgets removed ones', async () => {
    const first = new StoreUpJournal(store, { now });
    await Promise.all([first.add(entry('1')), first.add(entry('2')), first.add(entry('3'))]);
    await first.remove('2');
    await store.close();
    store = await openStore(place.options);
    const second = new StoreUpJournal(store, { now });
    expect(await second.list()).toEqual([entry('1'), entry('3')]);
  });

  it('tells the ups this process is answering from those a process before it left: the recovery leaves a live /up alone', async () => {
    const before = new StoreUpJournal(store, { now });
    await before.add(entry('1'));
    // The next process, of the same name: a /up comes as it starts recovering.
    const next = new StoreUpJournal(await another(), { now });
    await next.add(entry('2'));
    expect(await ids(next)).toEqual(['1', '2']);
    expect([next.inFlight('1'), next.inFlight('2')]).toEqual([false, true]);
    const sent: string[] = [];
    const answered = await recoverPendingUps({
      journal: next,
      directory: {
        postServer: async (update) => {
          sent.push(String(update.upUserId));
          throw new Error('the directory is away');
        },
      },
      discord: { guildStats: async () => ({}) },
      reminders: { scheduleGuild: async () => 'scheduled', getGuild: async () => undefined },
      wakeReminders: () => undefined,
      history: { record: async () => true, timed: async () => [] },
      settings: { get: async () => undefined },
      rest: {
        post: async () => undefined,
        delete: async () => undefined,
        patch: async () => undefined,
      } as never,
      logger: createLogger({ level: 'silent' }),
      now,
    });
    // Only the entry left before: the live /up answers its own.
    expect(sent).toEqual([entry('1').userId]);
    expect(answered).toBe(1);
    expect(next.inFlight('2')).toBe(true);
    await next.remove('2');
    expect(next.inFlight('2')).toBe(false);
  });

  it('keeps the entries of each process apart, so shard processes never answer the same up', async () => {
    const shards0 = new StoreUpJournal(store, { owner: 'shards-0', now });
    const shards1 = new StoreUpJournal(store, { owner: 'shards-1', now });
    await shards0.add(entry('1'));
    await shards1.add(entry('2'));
    expect(await ids(shards0)).toEqual(['1']);
    expect(await ids(shards1)).toEqual(['2']);
  });

  it('deletes tokens that no longer answer anything, whoever wrote them', async () => {
    let clock = NOW;
    const journal = new StoreUpJournal(store, { owner: 'a', now: () => clock });
    const gone = new StoreUpJournal(store, { owner: 'a process no longer started', now: () => clock });
    await journal.add(entry('1', NOW));
    await gone.add(entry('2', NOW));
    clock = NOW + TOKEN_LIFETIME_MS - 1;
    await journal.add(entry('3', clock));
    expect(await tokens(store)).toEqual([
      'interaction-token-1',
      'interaction-token-2',
      'interaction-token-3',
    ]);
    // Dead: deleted by the next write, and by the next listing.
    clock = NOW + TOKEN_LIFETIME_MS;
    await journal.add(entry('4', clock));
    expect(await tokens(store)).toEqual(['interaction-token-3', 'interaction-token-4']);
    clock = NOW + 2 * TOKEN_LIFETIME_MS;
    expect(await journal.list()).toEqual([]);
    expect(await tokens(store)).toEqual([]);
  });

  it('writes a burst of ups in one transaction, each answered once committed', async () => {
    const journal = new StoreUpJournal(store, { now });
    const transactions = vi.spyOn(store, 'transaction');
    // Another connection's view: what is committed, not what this one has in hand.
    const observer = new StoreUpJournal(await another(), { now });
    const made = Array.from({ length: 200 }, (_, i) =>
      journal.add(entry(String(i + 1))).then(async () => (await ids(observer)).includes(String(i + 1))),
    );
    expect((await Promise.all(made)).every(Boolean)).toBe(true);
    expect(transactions).toHaveBeenCalledTimes(1);
    await Promise.all(Array.from({ length: 200 }, (_, i) => journal.remove(String(i + 1))));
    expect(transactions).toHaveBeenCalledTimes(2);
    expect(await ids(observer)).toEqual([]);
  });

  it('writes the changes made during a write together in the next one', async () => {
    const journal = new StoreUpJournal(store, { now });
    const transactions = vi.spyOn(store, 'transaction');
    const made: Array<Promise<void>> = [journal.add(entry('1'))];
    // 49 more while the first write is under way: they wait for one write together.
    transactions.mockImplementationOnce((work) => {
      for (let i = 2; i <= 50; i++) made.push(journal.add(entry(String(i))));
      return Store.prototype.transaction.call(store, work);
    });
    await made[0];
    expect(made).toHaveLength(50);
    await Promise.all(made);
    expect(transactions).toHaveBeenCalledTimes(2);
    expect(await ids(journal)).toHaveLength(50);
  });

  it('writes nothing of a batch that fails, fails each of its changes, and goes on working', async () => {
    const journal = new StoreUpJournal(store, { now });
    await journal.add(entry('1'));
    await journal.add(entry('2'));
    const broken = { ...entry('3'), token: null as unknown as string };
    const outcomes = await Promise.allSettled([journal.remove('1'), journal.add(broken)]);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: expect.any(StoreError) },
      { status: 'rejected', reason: expect.any(StoreError) },
    ]);
    expect(await ids(journal)).toEqual(['1', '2']);
    await journal.remove('1');
    expect(await ids(journal)).toEqual(['2']);
  });

  it('applies an entry added and removed in one batch as never there', async () => {
    const journal = new StoreUpJournal(store, { now });
    await journal.add(entry('0'));
    await Promise.all([journal.add(entry('1')), journal.add(entry('2')), journal.remove('1')]);
    expect(await ids(journal)).toEqual(['0', '2']);
  });
});

async function tokens(store: Store): Promise<string[]> {
  const rows = await store.run((db) =>
    db.selectFrom('pending_ups').select('token').orderBy('token').execute(),
  );
  return rows.map((r) => r.token);
}

/**
 * The scheduler's look at what is due (store/reminders.ts `pending`) reads the partial index of
 * the pending rows (migration 018) in due order and stops at its limit, on both engines: with
 * 15,000 reminders already sent and 5,000 pending, it reads no more rows than it returns and sorts
 * nothing. Before, matched by a list of states on (state, due_at), it read every pending row up to
 * the horizon and sorted them (bench scenario 18: 5,242 rows read for 500 with a backlog of 5,000).
 */
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { pending } from '../../src/store/reminders.js';
import { ENGINES, freshStore } from './places.js';

const SENT = 15_000;
const PENDING = 5_000;
const LIMIT = 500;

function row(i: number, state: 'scheduled' | 'sent', dueAt: number) {
  return {
    guild_id: String(100_000_000_000_000_000n + BigInt(i)),
    next_up_at: dueAt,
    due_at: dueAt,
    state,
    claimed_by: null,
    claim_expires_at: null,
    nonce: null,
    sent_at: state === 'sent' ? dueAt : null,
    failure: null,
    updated_at: dueAt,
    trace_parent: null,
  };
}

interface PgPlan {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  Plans?: PgPlan[];
}

function nodes(plan: PgPlan): PgPlan[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe.each(ENGINES)('the due query on %s', (engine) => {
  let store: Store;
  let done: () => Promise<void>;
  const now = 1_800_000_000_000;

  beforeAll(async () => {
    ({ store, done } = await freshStore(engine));
    const rows = [
      // Sent long ago, due before the horizon: what an index on (state, due_at) or due_at alone reads too.
      ...Array.from({ length: SENT }, (_, i) => row(i, 'sent', now - 86_400_000 + i)),
      // A backlog: every one of them due already.
      ...Array.from({ length: PENDING }, (_, i) => row(SENT + i, 'scheduled', now - PENDING + i)),
    ];
    await store.run(async (db) => {
      for (let from = 0; from < rows.length; from += 1_000)
        await db
          .insertInto('reminders')
          .values(rows.slice(from, from + 1_000))
          .execute();
      await db.executeQuery(CompiledQuery.raw('analyze'));
    });
  }, 60_000);
  afterAll(async () => {
    await done?.();
  });

  it(`reads the pending rows' index in due order and stops at ${LIMIT}: no sort, no sent row read`, async () => {
    const query = (db: Parameters<Parameters<Store['run']>[0]>[0]) =>
      pending(db, 'reminders', now + 30_000, LIMIT).compile();
    const due = await store.run(async (db) => (await db.executeQuery(query(db))).rows);
    expect(due).toHaveLength(LIMIT);
    if (engine === 'postgres') {
      const [explained] = (await store.run(async (db) => {
        const q = query(db);
        return (
          await db.executeQuery(
            CompiledQuery.raw(`explain (analyze, format json) ${q.sql}`, [...q.parameters]),
          )
        ).rows;
      })) as Array<{ 'QUERY PLAN': Array<{ Plan: PgPlan }> }>;
      const all = nodes(explained!['QUERY PLAN'][0]!.Plan);
      expect(all.map((n) => n['Node Type'])).not.toContain('Sort');
      const scan = all.find((n) => n['Index Name'] === 'reminders_pending_due_at');
      expect(scan, JSON.stringify(all.map((n) => [n['Node Type'], n['Index Name']]))).toBeDefined();
      expect(scan!['Actual Rows']).toBeLessThanOrEqual(LIMIT);
    } else {
      const details = (await store.run(async (db) => {
        const q = query(db);
        return (await db.executeQuery(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters])))
          .rows;
      })) as Array<{ detail: string }>;
      const text = details.map((d) => d.detail).join(' | ');
      expect(text).toContain('USING INDEX reminders_pending_due_at');
      expect(text).not.toContain('TEMP B-TREE');
    }
  });
});

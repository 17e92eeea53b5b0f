/**
 * Column sets the migrations share (from 014 on: the released ones keep theirs as they were
 * written). A migration that uses one keeps meaning what it meant: change a set only by adding a
 * new one.
 */
import type { CreateTableBuilder } from 'kysely';

/** What every outbox row has (schema.ts OutboxColumns), after the columns of what it is about. */
export function outboxColumns<T extends string>(
  table: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, never> {
  return table
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claim_expires_at', 'bigint')
    .addColumn('nonce', 'text')
    .addColumn('done_at', 'bigint')
    .addColumn('failure', 'text')
    .addColumn('trace_parent', 'text');
}

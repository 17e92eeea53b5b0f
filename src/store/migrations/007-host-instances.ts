/**
 * Each process of one host name is told apart by a random instance id (issue 23): two live
 * processes with the same HOST_ID (cloned machines, whose default name is the same) must not both
 * run its shards, nor both lead. A row written before this migration has the empty instance,
 * which no process has: it counts as another process's until it is stale.
 */
import type { Kysely, Migration } from 'kysely';

export const hostInstances: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('shard_states')
      .addColumn('instance', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema
      .alterTable('leases')
      .addColumn('holder_instance', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
};

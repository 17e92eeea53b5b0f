/**
 * The scheduler's look (store/reminders.ts `pending`): reminders scheduled or claimed, due before a
 * time, in due order, 500 at most. Its index was (state, due_at): matched by a list of two states,
 * neither engine could read it in due order, so each look read every pending row up to the horizon
 * and sorted them (bench scenario 18: 5,242 rows read and 12.9 ms a look with a backlog of 5,000,
 * three hosts looking about 30 times a second). An index on due_at of the pending rows alone is
 * read in due order and stops at the 500th, whatever the backlog; the rows already sent are not in
 * it. The same for the members' reminders, whose index on due_at held every row.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const pendingReminders: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const [table, old] of [
      ['reminders', 'reminders_state_due_at'],
      ['personal_reminders', 'personal_reminders_due_at'],
    ] as const) {
      await sql`create index ${sql.id(`${table}_pending_due_at`)} on ${sql.id(table)} (due_at) where state in ('scheduled', 'claimed')`.execute(
        db,
      );
      await db.schema.dropIndex(old).execute();
    }
  },
};

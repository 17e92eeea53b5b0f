/**
 * The first schema. A migration is frozen once released: later changes are new migrations, and
 * migrations never import the live table types (they describe the schema as it was then).
 *
 * Only `text` and `bigint` columns, which mean the same on SQLite and PostgreSQL. Primary-key
 * columns say NOT NULL themselves: SQLite would otherwise accept NULL in a text primary key.
 */
import type { CreateTableBuilder, Kysely, Migration } from 'kysely';

/** The columns both reminder tables share (ReminderColumns in ../schema.ts). */
function reminderColumns<T extends string, C extends string>(table: CreateTableBuilder<T, C>) {
  return table
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claim_expires_at', 'bigint')
    .addColumn('nonce', 'text')
    .addColumn('sent_at', 'bigint')
    .addColumn('failure', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull());
}

export const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('pending_ups')
      .addColumn('interaction_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('channel_name', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('locale', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('guild_settings')
      .addColumn('guild_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('reminder_channel_id', 'text')
      .addColumn('reminder_role_id', 'text')
      .addColumn('reminder_template', 'text')
      .addColumn('public_language', 'text', (c) => c.notNull())
      .addColumn('problem', 'text')
      .addColumn('problem_at', 'bigint')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('reminders')
      .addColumn('guild_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('next_up_at', 'bigint', (c) => c.notNull())
      .$call(reminderColumns)
      .execute();
    // The scheduler's question: what is scheduled (or claimed) and due before a time.
    await db.schema
      .createIndex('reminders_state_due_at')
      .on('reminders')
      .columns(['state', 'due_at'])
      .execute();

    await db.schema
      .createTable('personal_reminders')
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .$call(reminderColumns)
      .addPrimaryKeyConstraint('personal_reminders_pkey', ['guild_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('personal_reminders_due_at')
      .on('personal_reminders')
      .column('due_at')
      .execute();
  },
};

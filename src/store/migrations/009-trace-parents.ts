/**
 * Background work remembers the trace that stored it (issue 26's traces): a reminder the /up that
 * scheduled it, a webhook event the delivery that brought it. The W3C `traceparent` of that work,
 * null when tracing was off; the span that posts it later, on any host, links to it.
 */
import type { Kysely, Migration } from 'kysely';

export const traceParents: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const table of ['reminders', 'personal_reminders', 'webhook_events']) {
      await db.schema.alterTable(table).addColumn('trace_parent', 'text').execute();
    }
  },
};

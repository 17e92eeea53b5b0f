/**
 * The directory's webhooks (issue 16): each server's set-up, and the outbox of events received.
 *
 * The key a server's page on the directory shows is kept as HMAC-SHA-256 under a random salt of
 * the server's own: a leaked database does not give it away, and a delivery's key is checked
 * against it in constant time. A salted hash and not a slow one (scrypt): the key is the
 * directory's random string, not a password a person chose, and every delivery is checked, so a
 * slow hash would only hand whoever floods the receiver the CPU.
 *
 * An event is stored (`pending`) before the directory is answered, then claimed, announced and
 * recorded as `done` or `failed`, as reminders are, with the same claim (claims.ts): one
 * conditional UPDATE, so of several processes one wins; a claim whose process died is taken over
 * after its lease with the same Discord nonce, so a message posted before the crash is not posted
 * twice.
 *
 * The receiver checks keys in memory first (`loadKeys`, `knows`): every server's salt and hash,
 * kept up to date by this repository's own `configure` and `remove` and by every `check` (which
 * reads the store), so a delivery for a server with no webhook, or with a wrong key, is refused
 * without a store query. The store stays the authority: a key that matches in memory is checked
 * there again, so a webhook turned off or given a new key by another process is not taken.
 *
 * One server cannot crowd the others out (issue 23). Given limits (IntakeLimits: the bot gives
 * WEBHOOK_SERVER_PENDING and WEBHOOK_SERVER_RATE), an event is refused ('full', answered 429) while
 * its server has that many waiting to be announced, or stored that many within the window; and
 * `due` takes every server's oldest event before any server's second, so a server with a thousand
 * waiting does not hold another's next one behind its thousand.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Selectable, SqlBool, Transaction } from 'kysely';
import { claimRow, finishRow, type Lease, pendingColumns, type RowFilter, retryRowAt } from './claims.js';
import { sql } from './kysely.js';
import type {
  Database,
  DirectoryWebhooksTable,
  GuildProblem,
  WebhookEventState,
  WebhookEventsTable,
} from './schema.js';
import type { Store } from './store.js';

export interface WebhookSetup {
  guildId: string;
  channelId: string;
  problem: GuildProblem | null;
  lastEventAt: number | null;
  updatedAt: number;
}

/** What a delivery's key is, against the server's set-up. */
export type KeyCheck =
  | { kind: 'ok'; setup: WebhookSetup }
  /** No webhook set up for this server (or no such server). */
  | { kind: 'unknown' }
  | { kind: 'wrong' };

export interface StoredEvent {
  id: string;
  guildId: string;
  type: string;
  /** JSON of the checked event. */
  payload: string;
  receivedAt: number;
  state: WebhookEventState;
  nonce: string | null;
  failure: string | null;
  /** The trace of the delivery that brought it (trace/spans.ts); null when tracing was off. */
  traceParent: string | null;
}

export interface EventClaim extends Lease {
  id: string;
}

/** How long an event is kept once done: a delivery repeated within it is still recognized. */
export const WEBHOOK_EVENT_DAYS = 14;
export const WEBHOOK_EVENT_MS = WEBHOOK_EVENT_DAYS * 86_400_000;

/** What memory keeps of a server's key: its salt and the key's hash under it. */
interface KeyRecord {
  salt: string;
  hash: Buffer;
}

/** How many events one server may have stored, at most; none given: no limit. */
export interface IntakeLimits {
  /** Its events waiting to be announced (pending, or being announced), at most. */
  maxPending: number;
  /** Its events stored within any `windowMs`, at most `max`. */
  rate: { max: number; windowMs: number };
}

/** What became of an event given to `enqueue`. */
export type EnqueueOutcome =
  | 'stored'
  /** Stored already: the directory delivered it again. */
  | 'duplicate'
  /** Refused: its server is over its IntakeLimits; nothing stored. */
  | 'full';

/** The states of an event not yet done: waiting, or being announced (or to be tried again). */
const WAITING_STATES = ['pending', 'claimed'] as const;

function hashKey(key: string, salt: string): Buffer {
  return createHmac('sha256', Buffer.from(salt, 'base64url')).update(key, 'utf8').digest();
}

function matches(record: KeyRecord, key: string): boolean {
  const given = hashKey(key, record.salt);
  return record.hash.length === given.length && timingSafeEqual(record.hash, given);
}

function recordOf(row: { key_salt: string; key_hash: string }): KeyRecord {
  return { salt: row.key_salt, hash: Buffer.from(row.key_hash, 'base64url') };
}

export class WebhookRepository {
  readonly #store: Store;
  /** Every server's key, once loadKeys ran; undefined before. */
  #keys: Map<string, KeyRecord> | undefined;
  readonly #limits: IntakeLimits | undefined;

  /** `limits`: refuse a server's events past them (enqueue answers 'full'); none: take every one. */
  constructor(store: Store, limits?: IntakeLimits) {
    this.#store = store;
    this.#limits = limits;
  }

  /** Sets the server's webhook up (a new key replaces the old one). */
  async configure(guildId: string, key: string, channelId: string, now: number): Promise<WebhookSetup> {
    const salt = randomBytes(16).toString('base64url');
    const columns = {
      channel_id: channelId,
      key_salt: salt,
      key_hash: hashKey(key, salt).toString('base64url'),
      problem: null,
      updated_at: now,
    };
    const row = await this.#store.run((db) =>
      db
        .insertInto('directory_webhooks')
        .values({ guild_id: guildId, last_event_at: null, ...columns })
        .onConflict((oc) => oc.column('guild_id').doUpdateSet(columns))
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    this.#keys?.set(guildId, recordOf(row));
    return setupOf(row);
  }

  /** Turns the server's webhook off; false when it was not on. */
  async remove(guildId: string): Promise<boolean> {
    const result = await this.#store.run((db) =>
      db.deleteFrom('directory_webhooks').where('guild_id', '=', guildId).executeTakeFirst(),
    );
    this.#keys?.delete(guildId);
    return result.numDeletedRows > 0n;
  }

  async get(guildId: string): Promise<WebhookSetup | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('directory_webhooks').selectAll().where('guild_id', '=', guildId).executeTakeFirst(),
    );
    return row && setupOf(row);
  }

  /** Reads every server's key into memory (for `knows`): the receiver does at its start. */
  async loadKeys(): Promise<void> {
    const rows = await this.#store.run((db) =>
      db.selectFrom('directory_webhooks').select(['guild_id', 'key_salt', 'key_hash']).execute(),
    );
    this.#keys = new Map(rows.map((row) => [row.guild_id, recordOf(row)]));
  }

  /**
   * A delivery's key against memory only (no store query), in constant time: 'unknown' for a
   * server with no webhook known here (or before loadKeys).
   */
  knows(guildId: string, key: string): KeyCheck['kind'] {
    const record = this.#keys?.get(guildId);
    if (!record) return 'unknown';
    return matches(record, key) ? 'ok' : 'wrong';
  }

  /** Checks a delivery's key against the store, in constant time; memory learns what it found. */
  async check(guildId: string, key: string): Promise<KeyCheck> {
    const row = await this.#store.run((db) =>
      db.selectFrom('directory_webhooks').selectAll().where('guild_id', '=', guildId).executeTakeFirst(),
    );
    if (!row) {
      this.#keys?.delete(guildId);
      return { kind: 'unknown' };
    }
    const record = recordOf(row);
    this.#keys?.set(guildId, record);
    return matches(record, key) ? { kind: 'ok', setup: setupOf(row) } : { kind: 'wrong' };
  }

  /** Records the server's last problem posting there (null clears it). */
  async setProblem(guildId: string, problem: GuildProblem | null): Promise<void> {
    await this.#store.run((db) =>
      db.updateTable('directory_webhooks').set({ problem }).where('guild_id', '=', guildId).execute(),
    );
  }

  /**
   * Stores a received event, unless one with its id is stored already: 'duplicate' then (the
   * directory delivered it again). Either way it is safe to answer 2xx. 'full': its server is over
   * its limits (see IntakeLimits), and nothing was stored.
   */
  async enqueue(event: {
    id: string;
    guildId: string;
    type: string;
    payload: string;
    receivedAt: number;
  }): Promise<EnqueueOutcome> {
    const limits = this.#limits;
    return this.#store.transaction<EnqueueOutcome>(async (trx) => {
      // Written first, then counted with the others (on SQLite a transaction that reads first
      // fails when another process wrote in between); over the limits, deleted again.
      const row = await trx
        .insertInto('webhook_events')
        .values({
          id: event.id,
          guild_id: event.guildId,
          type: event.type,
          payload: event.payload,
          received_at: event.receivedAt,
          ...pendingColumns(),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (row && limits && (await overLimits(trx, event, limits))) {
        await trx.deleteFrom('webhook_events').where('id', '=', event.id).execute();
        return 'full';
      }
      await trx
        .updateTable('directory_webhooks')
        .set({ last_event_at: event.receivedAt })
        .where('guild_id', '=', event.guildId)
        .execute();
      return row !== undefined ? 'stored' : 'duplicate';
    });
  }

  /**
   * Events to announce (pending ones, and claims whose lease ran out), at most `limit`, taken in
   * turns: each server's oldest first (the servers in the order of theirs), then each server's
   * second, and so on. A server with many waiting takes what the others leave of the batch, and
   * another's next event is in the next look whatever that server has waiting.
   */
  async due(now: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom((eb) =>
          eb
            .selectFrom('webhook_events')
            .selectAll()
            .select((eb) =>
              eb.fn
                .agg<number>('row_number')
                .over((ob) => ob.partitionBy('guild_id').orderBy('received_at').orderBy('id'))
                .as('turn'),
            )
            .where((eb) =>
              eb.or([
                eb('state', '=', 'pending'),
                eb.and([eb('state', '=', 'claimed'), eb('claim_expires_at', '<=', now)]),
              ]),
            )
            .as('due'),
        )
        .selectAll()
        .orderBy('turn')
        .orderBy('received_at')
        .orderBy('id')
        .limit(limit)
        .execute(),
    );
    return rows.map(eventOf);
  }

  async getEvent(id: string): Promise<StoredEvent | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('webhook_events').selectAll().where('id', '=', id).executeTakeFirst(),
    );
    return row && eventOf(row);
  }

  /**
   * Claims an event for `leaseMs`; undefined when another process holds it, it is done, or an
   * earlier event of its server still waits or is being announced (by any process): a server's
   * events are announced in the order they came, also when several processes announce.
   */
  async claim(id: string, by: string, leaseMs: number, now: number): Promise<EventClaim | undefined> {
    const where: RowFilter = (eb) => eb.and([byId(id)(eb), NONE_EARLIER_WAITING]);
    const won = await this.#store.run((db) =>
      claimRow(db, 'webhook_events', { where, waiting: 'pending', by, leaseMs, now }),
    );
    return won && { id, ...won.lease };
  }

  /** Records how the claimed event ended; false when the claim was no longer ours. */
  finish(claim: EventClaim, state: 'done' | 'failed', failure: string | null, now: number): Promise<boolean> {
    return this.#store.run((db) =>
      finishRow(db, 'webhook_events', byId(claim.id), claim, { state, failure, done_at: now }),
    );
  }

  /** A failure that may pass: the claim runs out at `at`, and the event is announced again then. */
  retryAt(claim: EventClaim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, 'webhook_events', byId(claim.id), claim, at));
  }

  /** Deletes the events done (or given up) before `before`; how many went. */
  async prune(before: number): Promise<number> {
    const result = await this.#store.run((db) =>
      db
        .deleteFrom('webhook_events')
        .where('state', 'in', ['done', 'failed'])
        .where('received_at', '<', before)
        .executeTakeFirst(),
    );
    return Number(result.numDeletedRows);
  }
}

/**
 * Whether the server of an event just written is over its limits, the event counted: by the
 * indexes (guild_id, state) and (guild_id, received_at), so each count reads few rows.
 */
async function overLimits(
  trx: Transaction<Database>,
  event: { guildId: string; receivedAt: number },
  limits: IntakeLimits,
): Promise<boolean> {
  const count = async (where: RowFilter): Promise<number> => {
    const { n } = await trx
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
      .where('guild_id', '=', event.guildId)
      .where(where)
      .executeTakeFirstOrThrow();
    return Number(n);
  };
  return (
    (await count((eb) => eb('state', 'in', WAITING_STATES))) > limits.maxPending ||
    (await count((eb) => eb('received_at', '>', event.receivedAt - limits.rate.windowMs))) > limits.rate.max
  );
}

/**
 * No event of the same server that came before this one (the order `due` takes them in) is still
 * pending or claimed. Without it, a process whose claim of a server's first event lost to another
 * process went on to that server's second, and posted it while the other was posting the first
 * (seen with two shard processes in test/ops/processes.test.ts).
 */
const NONE_EARLIER_WAITING = sql<SqlBool>`not exists (
  select 1 from webhook_events as earlier
  where earlier.guild_id = webhook_events.guild_id
    and earlier.state in ('pending', 'claimed')
    and (earlier.received_at < webhook_events.received_at
      or (earlier.received_at = webhook_events.received_at and earlier.id < webhook_events.id)))`;

function byId(id: string): RowFilter {
  return (eb) => eb('id', '=', id);
}

function setupOf(row: Selectable<DirectoryWebhooksTable>): WebhookSetup {
  return {
    guildId: row.guild_id,
    channelId: row.channel_id,
    problem: row.problem,
    lastEventAt: row.last_event_at === null ? null : Number(row.last_event_at),
    updatedAt: Number(row.updated_at),
  };
}

function eventOf(row: Selectable<WebhookEventsTable>): StoredEvent {
  return {
    id: row.id,
    guildId: row.guild_id,
    type: row.type,
    payload: row.payload,
    receivedAt: Number(row.received_at),
    state: row.state,
    nonce: row.nonce,
    failure: row.failure,
    traceParent: row.trace_parent,
  };
}

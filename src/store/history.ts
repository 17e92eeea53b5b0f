/**
 * The history of successful ups (issue 16): recorded once each, read as a server's leaderboard
 * for a period, kept UP_HISTORY_DAYS. A server's rows go with its settings (settings.ts,
 * deleteGuild) when the bot leaves it.
 */
import { sql } from './kysely.js';
import type { HeldWrite } from './room.js';
import type { UpSource } from './schema.js';
import type { Store } from './store.js';

/** How long an up is kept: a year and a bit, so "all time" and a year back can be shown. */
export const UP_HISTORY_DAYS = 400;
const DAY_MS = 86_400_000;
export const UP_HISTORY_MS = UP_HISTORY_DAYS * DAY_MS;
/**
 * An up the directory's webhook tells of within this long of the same member's /up through this
 * bot is that up, told again (the directory's clock and ours may differ by a little).
 */
export const SAME_UP_MS = 2 * 60_000;

export interface UpRecord {
  /** What makes recording idempotent: `bot:<interaction id>` for an /up through this bot. */
  id: string;
  guildId: string;
  userId: string;
  /** When it was given (epoch ms). */
  at: number;
  /** The directory's up count after it, when known. */
  upCount: number | null;
  source: UpSource;
  /** When the up became possible (the cooldown's end before it), when known. */
  possibleAt?: number | null;
}

/** An up as streaks and reaction times read it (features/history/streaks.ts). */
export interface TimedUpRow {
  userId: string;
  at: number;
  possibleAt: number | null;
}

/** A server's latest up (HistoryRepository.latest). */
export interface LatestUp {
  userId: string;
  at: number;
  source: UpSource;
}

/** A member's ups in a period, in leaderboard order. */
export interface MemberUps {
  userId: string;
  ups: number;
  /** Their first up in the period: who got there first ranks first among equals. */
  firstAt: number;
}

/** The top member of a period (top): who, how many ups, and when they reached that count. */
export interface TopMember {
  userId: string;
  ups: number;
  /** When they reached their count (their last up in the period). */
  reachedAt: number;
}

export class HistoryRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * An up (or what follows from it) that could not be written because the SQLite file's disk is
   * full waits for room and is written then (Store.holdUntilRoom): true when held. Recording is
   * idempotent (the id), so an up written then is counted once.
   */
  holdUntilRoom(err: unknown, key: string, write: HeldWrite): boolean {
    return this.#store.holdUntilRoom(err, key, write);
  }

  /**
   * Records one up; false when it is recorded already: an up with this id, or (the directory's
   * webhook telling of an up this bot gave) the same member's up through this bot within
   * SAME_UP_MS. An /up through this bot replaces the webhook's row of the same up, if that came
   * first: the bot's carries the up count. Each server's recording takes turns (PostgreSQL: a
   * transaction lock per server; SQLite: one writer at a time), so the two never both count.
   */
  async record(up: UpRecord): Promise<boolean> {
    const from = up.at - SAME_UP_MS;
    const to = up.at + SAME_UP_MS;
    const postgres = this.#store.engine === 'postgres';
    return this.#store.transaction(async (trx) => {
      if (postgres)
        await sql`SELECT pg_advisory_xact_lock(hashtext(${`up_history:${up.guildId}`}))`.execute(trx);
      if (up.source === 'bot') {
        await trx
          .deleteFrom('up_history')
          .where('guild_id', '=', up.guildId)
          .where('user_id', '=', up.userId)
          .where('source', 'in', ['webhook', 'notify'])
          .where('at', '>=', from)
          .where('at', '<=', to)
          .execute();
        const rows = await trx
          .insertInto('up_history')
          .values({
            id: up.id,
            guild_id: up.guildId,
            user_id: up.userId,
            at: up.at,
            up_count: up.upCount,
            source: up.source,
            possible_at: up.possibleAt ?? null,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .executeTakeFirst();
        return Number(rows.numInsertedOrUpdatedRows ?? 0) > 0;
      }
      // One statement: inserted only when no up of this member through the bot is that close.
      const result = await sql`
        INSERT INTO up_history (id, guild_id, user_id, at, up_count, source, possible_at)
        SELECT ${up.id}, ${up.guildId}, ${up.userId}, CAST(${up.at} AS bigint),
               CAST(${up.upCount} AS bigint), ${up.source}, CAST(${up.possibleAt ?? null} AS bigint)
        WHERE NOT EXISTS (
          SELECT 1 FROM up_history
          WHERE guild_id = ${up.guildId} AND user_id = ${up.userId} AND source = 'bot'
            AND at >= CAST(${from} AS bigint) AND at <= CAST(${to} AS bigint)
        )
        ON CONFLICT (id) DO NOTHING`.execute(trx);
      return Number(result.numAffectedRows ?? 0n) > 0;
    });
  }

  /**
   * Every member who raised the server since `since` (and before `until`), most ups first (equal counts: the one who
   * began first). The whole list: a server has at most a few thousand members who ever up, and
   * the asker's rank comes from it.
   */
  async members(guildId: string, since: number, until?: number): Promise<MemberUps[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('up_history')
        .select((eb) => ['user_id', eb.fn.countAll<number>().as('ups'), eb.fn.min('at').as('first_at')])
        .where('guild_id', '=', guildId)
        .where('at', '>=', since)
        // Bounded only when asked (a digest's period): /up's and /leaderboard's reads stay as they were.
        .$if(until !== undefined, (q) => q.where('at', '<', until as number))
        .groupBy('user_id')
        .execute(),
    );
    return rows
      .map((r) => ({ userId: r.user_id, ups: Number(r.ups), firstAt: Number(r.first_at) }))
      .sort((a, b) => b.ups - a.ups || a.firstAt - b.firstAt || a.userId.localeCompare(b.userId));
  }

  /** The server's ups since `since` (and before `until`), oldest first: its streaks and reaction times. */
  async timed(guildId: string, since: number, until?: number): Promise<TimedUpRow[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('up_history')
        .select(['user_id', 'at', 'possible_at'])
        .where('guild_id', '=', guildId)
        .where('at', '>=', since)
        // Bounded only when asked (a digest's period): /up's and /leaderboard's reads stay as they were.
        .$if(until !== undefined, (q) => q.where('at', '<', until as number))
        .orderBy('at')
        .execute(),
    );
    return rows.map((r) => ({
      userId: r.user_id,
      at: Number(r.at),
      possibleAt: r.possible_at === null ? null : Number(r.possible_at),
    }));
  }

  /** Each member's ups per UTC day since `since` (`day`: the day's first millisecond). */
  async perDay(guildId: string, since: number): Promise<Array<{ userId: string; day: number; ups: number }>> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('up_history')
        .select((eb) => [
          'user_id',
          sql<number>`at - (at % ${sql.lit(DAY_MS)})`.as('day'),
          eb.fn.countAll<number>().as('ups'),
        ])
        .where('guild_id', '=', guildId)
        .where('at', '>=', since)
        .groupBy(['user_id', sql`at - (at % ${sql.lit(DAY_MS)})`])
        .execute(),
    );
    return rows.map((r) => ({ userId: r.user_id, day: Number(r.day), ups: Number(r.ups) }));
  }

  /** A member's ups in the server in [start, end) (end null: up to now). */
  async upsIn(guildId: string, userId: string, start: number, end: number | null): Promise<number> {
    const row = await this.#store.run((db) => {
      let query = db
        .selectFrom('up_history')
        .select((eb) => eb.fn.countAll<number>().as('ups'))
        .where('guild_id', '=', guildId)
        .where('user_id', '=', userId)
        .where('at', '>=', start);
      if (end !== null) query = query.where('at', '<', end);
      return query.executeTakeFirst();
    });
    return Number(row?.ups ?? 0);
  }

  /**
   * The server's top member of [start, end) (the reward roles' top role): most ups; equal counts,
   * who reached the count first. Undefined when nobody upped then.
   */
  async top(guildId: string, start: number, end: number): Promise<TopMember | undefined> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('up_history')
        .select((eb) => ['user_id', eb.fn.countAll<number>().as('ups'), eb.fn.max('at').as('reached_at')])
        .where('guild_id', '=', guildId)
        .where('at', '>=', start)
        .where('at', '<', end)
        .groupBy('user_id')
        .orderBy('ups', 'desc')
        .orderBy('reached_at')
        .orderBy('user_id')
        .limit(1)
        .executeTakeFirst(),
    );
    return row && { userId: row.user_id, ups: Number(row.ups), reachedAt: Number(row.reached_at) };
  }

  /** Whether an up with this id is recorded (an event taken over after a crash finds its own row). */
  async has(id: string): Promise<boolean> {
    const row = await this.#store.run((db) =>
      db.selectFrom('up_history').select('id').where('id', '=', id).executeTakeFirst(),
    );
    return row !== undefined;
  }

  /**
   * The server's latest up (of one member, when given): who, when, from where. /settings show says
   * whether ups are being seen and where from; /up on v3 says when the member upped last.
   */
  async latest(guildId: string, userId?: string): Promise<LatestUp | undefined> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('up_history')
        .select(['user_id', 'at', 'source'])
        .where('guild_id', '=', guildId)
        .$if(userId !== undefined, (q) => q.where('user_id', '=', userId as string))
        .orderBy('at', 'desc')
        .limit(1)
        .executeTakeFirst(),
    );
    return row && { userId: row.user_id, at: Number(row.at), source: row.source };
  }

  /** Deletes what is older than `before` (retention); how many rows went. */
  async prune(before: number): Promise<number> {
    const result = await this.#store.run((db) =>
      db.deleteFrom('up_history').where('at', '<', before).executeTakeFirst(),
    );
    return Number(result.numDeletedRows);
  }
}

/**
 * Gateway sessions that outlive the process: each shard's Discord gateway session (its id, the
 * last sequence received and the address to resume at, with what READY said of the bot) and a
 * snapshot of the shard's guilds (a JSON packet each). A shard's session and its guilds are saved
 * together, in one transaction, so that the sequence and the snapshot always match: the next
 * process resumes the session from that sequence and restores the guilds from the snapshot
 * instead of identifying again (which costs an identify turn and every guild's GUILD_CREATE).
 *
 * A session is only taken back by a process with the same shard count, and only while young
 * enough for Discord to still resume it; anything else is left for the caller to forget.
 */
import type { Insertable } from 'kysely';
import type { GatewayGuildsTable } from './schema.js';
import type { Store } from './store.js';

export interface StoredGatewaySession {
  shardId: number;
  shardCount: number;
  sessionId: string;
  /** The last sequence number received: what the guilds saved with it are up to date with. */
  sequence: number;
  resumeUrl: string;
  /** JSON text of what READY said of the bot ({user, application}). */
  identity: string;
  savedAt: number;
}

export interface GatewaySnapshot {
  session: StoredGatewaySession;
  /** The shard's guild packets (JSON texts), any order. */
  guilds: string[];
}

export interface GatewaySave {
  shardId: number;
  /**
   * null: the shard has no session to resume: its session row and all its guild rows are
   * deleted (guilds/gone ignored).
   */
  session: StoredGatewaySession | null;
  /**
   * true: every guild row of this shard is replaced by `guilds` (a new session); false: `guilds`
   * are upserted (a row may move from another shard) and `gone` deleted.
   */
  replace: boolean;
  guilds: { guildId: string; packet: string }[];
  /** Guilds the shard no longer has (deleted only where this shard holds them), after `guilds`. */
  gone: string[];
}

/** Rows per statement: 3 values each, well under SQLite's 32,766 and PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 1_000;
/** And at most this many characters of packets per statement, whatever their count. */
const CHARS_PER_STATEMENT = 8_000_000;

export class GatewaySessionRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * The sessions of these shards saved with this shard count and no older than maxAgeMs at
   * `now`, each with its guilds. Others are left as they are. Read as one snapshot, so that a
   * save committing meanwhile cannot split a session from its guilds.
   */
  async load(
    shardIds: readonly number[],
    shardCount: number,
    maxAgeMs: number,
    now: number,
  ): Promise<Map<number, GatewaySnapshot>> {
    const found = new Map<number, GatewaySnapshot>();
    if (shardIds.length === 0) return found;
    await this.#store.run((db) =>
      db
        .transaction()
        // PostgreSQL: both reads see one snapshot (SQLite's transactions are serial anyway).
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const sessions = await trx
            .selectFrom('gateway_sessions')
            .selectAll()
            .where('shard_id', 'in', [...shardIds])
            .where('shard_count', '=', shardCount)
            .where('saved_at', '>=', now - maxAgeMs)
            .execute();
          if (sessions.length === 0) return;
          for (const row of sessions) {
            const session: StoredGatewaySession = {
              shardId: Number(row.shard_id),
              shardCount: Number(row.shard_count),
              sessionId: row.session_id,
              sequence: Number(row.sequence),
              resumeUrl: row.resume_url,
              identity: row.identity,
              savedAt: Number(row.saved_at),
            };
            found.set(session.shardId, { session, guilds: [] });
          }
          const guilds = await trx
            .selectFrom('gateway_guilds')
            .select(['shard_id', 'packet'])
            .where('shard_id', 'in', [...found.keys()])
            .execute();
          for (const row of guilds) found.get(Number(row.shard_id))?.guilds.push(row.packet);
        }),
    );
    return found;
  }

  /**
   * All of the saves in ONE transaction (all or nothing), in order. Inserts are chunked so that
   * thousands of guilds stay within each engine's bound-parameter limits (SQLite and pg).
   */
  async save(saves: readonly GatewaySave[]): Promise<void> {
    if (saves.length === 0) return;
    await this.#store.transaction(async (trx) => {
      for (const save of saves) {
        const { shardId, session } = save;
        if (session === null) {
          await trx.deleteFrom('gateway_sessions').where('shard_id', '=', shardId).execute();
          await trx.deleteFrom('gateway_guilds').where('shard_id', '=', shardId).execute();
          continue;
        }
        await trx
          .insertInto('gateway_sessions')
          .values({
            shard_id: shardId,
            shard_count: session.shardCount,
            session_id: session.sessionId,
            sequence: session.sequence,
            resume_url: session.resumeUrl,
            identity: session.identity,
            saved_at: session.savedAt,
          })
          .onConflict((oc) =>
            oc.column('shard_id').doUpdateSet((eb) => ({
              shard_count: eb.ref('excluded.shard_count'),
              session_id: eb.ref('excluded.session_id'),
              sequence: eb.ref('excluded.sequence'),
              resume_url: eb.ref('excluded.resume_url'),
              identity: eb.ref('excluded.identity'),
              saved_at: eb.ref('excluded.saved_at'),
            })),
          )
          .execute();
        if (save.replace) {
          await trx.deleteFrom('gateway_guilds').where('shard_id', '=', shardId).execute();
        }
        // One row per guild (the last packet given wins): an upsert may not touch a row twice.
        const rows = new Map<string, Insertable<GatewayGuildsTable>>();
        for (const guild of save.guilds) {
          rows.set(guild.guildId, { guild_id: guild.guildId, shard_id: shardId, packet: guild.packet });
        }
        for (const values of chunks([...rows.values()], (row) => row.packet.length)) {
          await trx
            .insertInto('gateway_guilds')
            .values(values)
            .onConflict((oc) =>
              oc.column('guild_id').doUpdateSet((eb) => ({
                shard_id: eb.ref('excluded.shard_id'),
                packet: eb.ref('excluded.packet'),
              })),
            )
            .execute();
        }
        if (!save.replace) {
          for (const ids of chunks(save.gone, () => 0)) {
            await trx
              .deleteFrom('gateway_guilds')
              .where('shard_id', '=', shardId)
              .where('guild_id', 'in', ids)
              .execute();
          }
        }
      }
    });
  }
}

/** `items` in runs of at most ROWS_PER_STATEMENT, and CHARS_PER_STATEMENT by `size` (one item at least). */
function chunks<T>(items: readonly T[], size: (item: T) => number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let chars = 0;
  for (const item of items) {
    const itemChars = size(item);
    if (
      current.length > 0 &&
      (current.length >= ROWS_PER_STATEMENT || chars + itemChars > CHARS_PER_STATEMENT)
    ) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += itemChars;
  }
  if (current.length > 0) out.push(current);
  return out;
}

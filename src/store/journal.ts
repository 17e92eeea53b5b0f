/**
 * The journal of /up requests in flight, so that a bot killed during an up and started again
 * still answers the person who asked (nothing lost) without raising the server twice (the
 * directory's cooldown refuses a second up; features/up/recover.ts). An /up is recorded before
 * it is sent and removed once its answer is decided.
 *
 * Changes made while a write is under way go out together in the
 * next one (one transaction): a burst of ups costs a few commits, not two each. Each change is
 * answered once its transaction has committed; a failed transaction fails all its changes and
 * writes none of them.
 *
 * Entries hold interaction tokens, which answer as the bot for 15 minutes: every write also
 * deletes the entries older than that (of every process), they are dropped once answered, and
 * nothing here logs an entry.
 */
import type { Insertable, Selectable } from 'kysely';
import type { PendingUpsTable } from './schema.js';
import type { Store } from './store.js';

export interface PendingUp {
  interactionId: string;
  /** The interaction's token: answers it after a restart. */
  token: string;
  applicationId: string;
  guildId: string;
  /**
   * The server's locale as the interaction told it: a public answer's language with `auto`.
   * Unknown (null) for an entry journaled before migration 006.
   */
  guildLocale: string | null;
  channelId: string;
  channelName: string;
  userId: string;
  /** The presser's locale: a private answer's language. */
  locale: string;
  /** When the interaction was created (ms epoch): its token dies 15 minutes later. */
  createdAt: number;
}

/** The port the /up use case writes to; StoreUpJournal below, a memory one in the tests. */
export interface UpJournal {
  add(entry: PendingUp): Promise<void>;
  remove(interactionId: string): Promise<void>;
  list(): Promise<PendingUp[]>;
  /**
   * Whether this process added the entry and is answering it now (a live /up): the recovery after
   * a restart, which reads the journal as the first interactions come, must leave it alone.
   */
  inFlight?(interactionId: string): boolean;
}

/** How long an interaction token answers: past it an entry is of no use to anyone. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;

/** Rows per INSERT, well under both engines' limit on bound values (11 per row). */
const ROWS_PER_INSERT = 500;

export interface StoreUpJournalOptions {
  /** Tells apart the processes sharing the store: each shard process recovers its own ups. */
  owner?: string;
  now?: () => number;
}

interface PendingChange {
  interactionId: string;
  /** Undefined: remove the entry. */
  entry: PendingUp | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class StoreUpJournal implements UpJournal {
  readonly owner: string;
  readonly #store: Store;
  readonly #now: () => number;
  /** The write under way (never rejects): the next batch starts after it. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Changes waiting for the next write; undefined while none is scheduled. */
  #batch: PendingChange[] | undefined;
  /** The entries this process added and has not removed: the ups it is answering itself. */
  readonly #mine = new Set<string>();

  constructor(store: Store, options: StoreUpJournalOptions = {}) {
    this.#store = store;
    this.owner = options.owner ?? 'main';
    this.#now = options.now ?? Date.now;
  }

  add(entry: PendingUp): Promise<void> {
    this.#mine.add(entry.interactionId);
    return this.#update(entry.interactionId, entry);
  }

  remove(interactionId: string): Promise<void> {
    this.#mine.delete(interactionId);
    return this.#update(interactionId, undefined);
  }

  inFlight(interactionId: string): boolean {
    return this.#mine.has(interactionId);
  }

  /**
   * Takes over the live entries of another owner (a host that died and did not come back), in one
   * conditional UPDATE: of several hosts adopting at once, each entry goes to exactly one.
   */
  async adopt(fromOwner: string): Promise<PendingUp[]> {
    const rows = await this.#store.run((db) =>
      db
        .updateTable('pending_ups')
        .set({ owner: this.owner })
        .where('owner', '=', fromOwner)
        .where('created_at', '>', this.#deadBefore())
        .returningAll()
        .execute(),
    );
    return rows.map((row) => this.#entry(row));
  }

  /** This process's entries, once the changes made before the call are written. */
  async list(): Promise<PendingUp[]> {
    await this.#chain;
    const rows = await this.#store.transaction(async (trx) => {
      await trx.deleteFrom('pending_ups').where('created_at', '<=', this.#deadBefore()).execute();
      return trx.selectFrom('pending_ups').selectAll().where('owner', '=', this.owner).execute();
    });
    return rows.map((row) => this.#entry(row));
  }

  #entry(row: Selectable<PendingUpsTable>): PendingUp {
    return {
      interactionId: row.interaction_id,
      token: row.token,
      applicationId: row.application_id,
      guildId: row.guild_id,
      guildLocale: row.guild_locale,
      channelId: row.channel_id,
      channelName: row.channel_name,
      userId: row.user_id,
      locale: row.locale,
      createdAt: row.created_at,
    };
  }

  #update(interactionId: string, entry: PendingUp | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const change = { interactionId, entry, resolve, reject };
      if (this.#batch) {
        this.#batch.push(change);
        return;
      }
      const batch: PendingChange[] = [change];
      this.#batch = batch;
      this.#chain = this.#chain.then(async () => {
        // From here on, changes go to the batch after this one.
        this.#batch = undefined;
        try {
          await this.#write(batch);
          for (const pending of batch) pending.resolve();
        } catch (err) {
          for (const pending of batch) pending.reject(err);
        }
      });
    });
  }

  async #write(batch: PendingChange[]): Promise<void> {
    // The last change to an entry decides: added then removed in one batch is not written at all.
    const last = new Map(batch.map((c) => [c.interactionId, c.entry]));
    const removed = [...last].filter(([, entry]) => entry === undefined).map(([id]) => id);
    const rows = [...last.values()].filter((e) => e !== undefined).map((e) => this.#row(e));
    await this.#store.transaction(async (trx) => {
      for (const ids of chunks(removed, ROWS_PER_INSERT)) {
        await trx.deleteFrom('pending_ups').where('interaction_id', 'in', ids).execute();
      }
      for (const values of chunks(rows, ROWS_PER_INSERT)) {
        await trx
          .insertInto('pending_ups')
          .values(values)
          .onConflict((oc) =>
            oc.column('interaction_id').doUpdateSet((eb) => ({
              owner: eb.ref('excluded.owner'),
              token: eb.ref('excluded.token'),
              application_id: eb.ref('excluded.application_id'),
              guild_id: eb.ref('excluded.guild_id'),
              guild_locale: eb.ref('excluded.guild_locale'),
              channel_id: eb.ref('excluded.channel_id'),
              channel_name: eb.ref('excluded.channel_name'),
              user_id: eb.ref('excluded.user_id'),
              locale: eb.ref('excluded.locale'),
              created_at: eb.ref('excluded.created_at'),
            })),
          )
          .execute();
      }
      await trx.deleteFrom('pending_ups').where('created_at', '<=', this.#deadBefore()).execute();
    });
  }

  #row(entry: PendingUp): Insertable<PendingUpsTable> {
    return {
      interaction_id: entry.interactionId,
      owner: this.owner,
      token: entry.token,
      application_id: entry.applicationId,
      guild_id: entry.guildId,
      guild_locale: entry.guildLocale,
      channel_id: entry.channelId,
      channel_name: entry.channelName,
      user_id: entry.userId,
      locale: entry.locale,
      created_at: entry.createdAt,
    };
  }

  #deadBefore(): number {
    return this.#now() - TOKEN_LIFETIME_MS;
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

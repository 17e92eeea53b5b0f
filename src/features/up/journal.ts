/**
 * A small on-disk journal of /up requests in flight, so that a bot killed during an up and
 * started again still answers the person who asked (nothing lost) without raising the server
 * twice (the directory's cooldown refuses a second up; see recover.ts).
 *
 * One JSON file, rewritten whole (write to a temporary file, then rename: a crash leaves the old
 * or the new file, never half of one), one write at a time. Changes made while a write is under
 * way go out together in the next one: under a burst of ups that is a few writes, not two per up
 * each rewriting every entry (about 80 kB with 200 ups in flight). It holds interaction tokens,
 * which answer as the bot for 15 minutes: the file is created readable by its owner only and
 * entries are dropped once answered or too old to answer.
 */
import * as fsPromises from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface PendingUp {
  interactionId: string;
  /** The interaction's token: answers it after a restart. */
  token: string;
  applicationId: string;
  guildId: string;
  channelId: string;
  channelName: string;
  userId: string;
  locale: string;
  /** When the interaction was created (ms epoch): its token dies 15 minutes later. */
  createdAt: number;
}

export interface UpJournal {
  add(entry: PendingUp): Promise<void>;
  remove(interactionId: string): Promise<void>;
  list(): Promise<PendingUp[]>;
}

function isPendingUp(value: unknown): value is PendingUp {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    [
      'interactionId',
      'token',
      'applicationId',
      'guildId',
      'channelId',
      'channelName',
      'userId',
      'locale',
    ].every((k) => typeof v[k] === 'string') && typeof v.createdAt === 'number'
  );
}

/** The file operations the journal makes (node:fs/promises by default; tests count or fail them). */
export interface JournalFiles {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  writeFile(path: string, data: string, options: { mode: number }): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
}

interface PendingChange {
  change: (entries: Map<string, PendingUp>) => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class FileUpJournal implements UpJournal {
  readonly path: string;
  #entries: Map<string, PendingUp> | undefined;
  /** The write under way (never rejects): the next batch starts after it. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Changes waiting for the next write; undefined while none is scheduled. */
  #batch: PendingChange[] | undefined;

  readonly #files: JournalFiles;

  /** `name` tells processes apart that share DATA_DIR (each shard process keeps its own file). */
  constructor(dataDir: string, name = 'pending-ups', files: JournalFiles = fsPromises) {
    this.path = join(dataDir, `${name}.json`);
    this.#files = files;
  }

  add(entry: PendingUp): Promise<void> {
    return this.#update((entries) => entries.set(entry.interactionId, entry));
  }

  remove(interactionId: string): Promise<void> {
    return this.#update((entries) => entries.delete(interactionId));
  }

  async list(): Promise<PendingUp[]> {
    await this.#chain.catch(() => undefined);
    return [...(await this.#load()).values()];
  }

  async #load(): Promise<Map<string, PendingUp>> {
    if (this.#entries) return this.#entries;
    let parsed: unknown = [];
    try {
      parsed = JSON.parse(await this.#files.readFile(this.path, 'utf8'));
    } catch {
      // No journal yet, or an unreadable one: nothing to recover from it.
    }
    const list = Array.isArray(parsed) ? parsed.filter(isPendingUp) : [];
    this.#entries = new Map(list.map((e) => [e.interactionId, e]));
    return this.#entries;
  }

  /** Resolves once a write that includes the change has reached the file (rejects if it failed). */
  #update(change: (entries: Map<string, PendingUp>) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.#batch) {
        this.#batch.push({ change, resolve, reject });
        return;
      }
      const batch: PendingChange[] = [{ change, resolve, reject }];
      this.#batch = batch;
      this.#chain = this.#chain.then(async () => {
        // From here on, changes go to the batch after this one.
        this.#batch = undefined;
        try {
          const entries = await this.#load();
          for (const pending of batch) pending.change(entries);
          await this.#write(entries);
          for (const pending of batch) pending.resolve();
        } catch (err) {
          for (const pending of batch) pending.reject(err);
        }
      });
    });
  }

  async #write(entries: Map<string, PendingUp>): Promise<void> {
    await this.#files.mkdir(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.tmp`;
    await this.#files.writeFile(temp, JSON.stringify([...entries.values()]), { mode: 0o600 });
    await this.#files.rename(temp, this.path);
  }
}

/** For tests and for running without a data directory. */
export class MemoryUpJournal implements UpJournal {
  readonly entries = new Map<string, PendingUp>();
  async add(entry: PendingUp): Promise<void> {
    this.entries.set(entry.interactionId, entry);
  }
  async remove(interactionId: string): Promise<void> {
    this.entries.delete(interactionId);
  }
  async list(): Promise<PendingUp[]> {
    return [...this.entries.values()];
  }
}

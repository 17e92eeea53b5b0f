/**
 * A small on-disk journal of /up requests in flight, so that a bot killed during an up and
 * started again still answers the person who asked (nothing lost) without raising the server
 * twice (the directory's cooldown refuses a second up; see recover.ts).
 *
 * One JSON file, rewritten whole (write to a temporary file, then rename: a crash leaves the old
 * or the new file, never half of one), with writes serialized. It holds interaction tokens,
 * which answer as the bot for 15 minutes: the file is created readable by its owner only and
 * entries are dropped once answered or too old to answer.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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

export class FileUpJournal implements UpJournal {
  readonly path: string;
  #entries: Map<string, PendingUp> | undefined;
  #chain: Promise<unknown> = Promise.resolve();

  /** `name` tells processes apart that share DATA_DIR (each shard process keeps its own file). */
  constructor(dataDir: string, name = 'pending-ups') {
    this.path = join(dataDir, `${name}.json`);
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
      parsed = JSON.parse(await readFile(this.path, 'utf8'));
    } catch {
      // No journal yet, or an unreadable one: nothing to recover from it.
    }
    const list = Array.isArray(parsed) ? parsed.filter(isPendingUp) : [];
    this.#entries = new Map(list.map((e) => [e.interactionId, e]));
    return this.#entries;
  }

  #update(change: (entries: Map<string, PendingUp>) => void): Promise<void> {
    const next = this.#chain.then(async () => {
      const entries = await this.#load();
      change(entries);
      await mkdir(dirname(this.path), { recursive: true });
      const temp = `${this.path}.${process.pid}.tmp`;
      await writeFile(temp, JSON.stringify([...entries.values()]), { mode: 0o600 });
      await rename(temp, this.path);
    });
    this.#chain = next.catch(() => undefined);
    return next;
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

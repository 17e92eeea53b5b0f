/**
 * The journal of /up requests in flight, so that a bot killed during an up and started again
 * still answers the person who asked (nothing lost) without raising the server twice (the
 * directory's cooldown refuses a second up; see recover.ts). The bot keeps it in the store
 * (StoreUpJournal, src/store/journal.ts). Its entries hold interaction tokens, which answer as the
 * bot for 15 minutes: they are dropped once answered or too old to answer, and never logged.
 */

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

/** For tests of what uses a journal. */
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

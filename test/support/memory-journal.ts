/** A journal of ups in flight kept in memory, for tests of what uses one (src/store/journal.ts). */
import type { PendingUp, UpJournal } from '../../src/store/journal.js';

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

/**
 * What a host that died leaves behind. Every host looks, every ADOPT_EVERY_MS, for hosts that
 * have written none of their shards for SILENT_MS (a minute: a host that restarts sooner does
 * all this itself) and:
 * - takes their ups in flight over (one conditional UPDATE: each entry goes to one host) and
 *   answers them as after a restart: the person still gets an answer, since an interaction token
 *   works from any host;
 * - says which shards are orphaned, so that their guilds' reminders are sent too (the
 *   reminders' own claims keep each to one host; `onOrphans`).
 */

import type { Logger } from '../log/logger.js';
import type { PendingUp } from '../store/journal.js';
import { PeriodicTask } from '../tasks/periodic.js';

export const ADOPT_EVERY_MS = 30_000;
export const SILENT_MS = 60_000;

/** The journal owner of a host's ups. */
export function hostJournalOwner(host: string): string {
  return `host:${host}`;
}

export interface AdoptOptions {
  hosts: { silent(silentMs: number): Promise<{ hosts: string[]; shards: number[] }> };
  journal: { adopt(fromOwner: string): Promise<PendingUp[]> };
  /** Answers entries as after a restart (recoverPendingUps); resolves to how many were answered. */
  answer: (entries: PendingUp[]) => Promise<number>;
  logger: Logger;
  /** The shards of the hosts that are gone, after each look (empty when none is). */
  onOrphans?: (shards: number[]) => void;
  everyMs?: number;
  silentMs?: number;
}

/**
 * The look, every `everyMs` from start() (the first one `everyMs` after it); `runNow()` looks at
 * once. A look that fails is logged, and the next one comes as usual.
 */
export function adoptOrphanedUps(options: AdoptOptions): PeriodicTask {
  const { hosts, journal, answer, logger } = options;
  const silentMs = options.silentMs ?? SILENT_MS;
  const everyMs = options.everyMs ?? ADOPT_EVERY_MS;
  return new PeriodicTask({
    name: 'orphan adoption',
    everyMs,
    firstDelayMs: everyMs,
    failure: 'could not look for the ups of hosts that are gone',
    logger,
    run: async () => {
      const silent = await hosts.silent(silentMs);
      options.onOrphans?.(silent.shards);
      for (const host of silent.hosts) {
        const entries = await journal.adopt(hostJournalOwner(host));
        if (entries.length === 0) continue;
        logger.warn(
          { from: host, ups: entries.length },
          'answering the ups in flight of a host that is gone',
        );
        await answer(entries);
      }
    },
  });
}

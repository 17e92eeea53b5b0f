/**
 * What the statistics poster (stats-poster.ts) asks before it posts when several hosts share one
 * bot, and what the hosts (hosts/hosts.ts) answer: a type only, so that neither imports the other.
 */

/**
 * What the gate answers: go (and `stillValid`, asked right before each attempt: false when this
 * host lost the lead meanwhile, frozen or cut off), or not now and why; `retryInMs` when the
 * next turn is known (the interval since the last post, by any host, not over yet).
 */
export type StatsGate =
  | {
      go: true;
      stillValid: () => Promise<boolean>;
      /**
       * The post reached the directory `sentAgoMs` ago: the next turn, on whichever host, is an
       * interval from then.
       */
      done?: (sentAgoMs: number) => Promise<void>;
    }
  | { go: false; reason: 'not-leader' | 'too-soon' | 'unknown'; retryInMs?: number };

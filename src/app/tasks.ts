/**
 * The one list of a bot process's background tasks (bot.ts builds it once): those every process
 * has (services.ts), then the features', the gateway's and the store's. A new task is added here.
 */
import type { Config } from '../config/env.js';
import { historyPruner } from '../features/history/prune.js';
import type { GatewaySessions } from '../gateway/gateway-sessions.js';
import { ADOPT_EVERY_MS, adoptOrphanedUps } from '../hosts/adopt.js';
import type { ShardOwnership } from '../hosts/ownership.js';
import { UpWatchRepository } from '../store/index.js';
import type { PendingUp } from '../store/journal.js';
import { type BackgroundTask, backgroundTask } from '../tasks/tasks.js';
import type { BotParts } from './deps.js';
import type { Services } from './services.js';

/**
 * Every background task of this process, started in this order once connected and stopped
 * together at shutdown: a new one is added here (or, for every process, in services.ts).
 */
export function botTasks(o: {
  services: Services;
  parts: BotParts;
  sessions: GatewaySessions;
  /** Answers ups as after a restart (features/up/recover.ts): a gone host's, here. */
  recover: (entries: PendingUp[]) => Promise<number>;
  sharding: Config['sharding'];
  ownership: ShardOwnership;
}): BackgroundTask[] {
  const { services, sessions, recover, sharding, ownership } = o;
  const { deps, features, journal, guildStats } = o.parts;
  const { history, webhooks, logger, now } = deps;
  const { engines, announcer, postsEngines, rewardEngine, streakWatch } = features;
  return [
    ...services.tasks,
    // Reminders that fell due while the bot was down go out now.
    backgroundTask('reminders', engines.scheduler),
    // And the follow-ups of reminders upped meanwhile.
    backgroundTask('reminder follow-ups', engines.followups),
    // And webhook events stored but not announced before a restart.
    backgroundTask('webhook announcer', announcer),
    // And the digests of periods that ended meanwhile, and the live leaderboards.
    backgroundTask('digests', postsEngines.digests),
    backgroundTask('live leaderboards', postsEngines.liveBoards),
    // And the reward roles to give or take back (periods that ended meanwhile included).
    ...rewardEngine.tasks,
    // And the streaks whose window's grace ran out (within the last hour, the bot down included).
    ...streakWatch.tasks,
    // What the gateway does not give of a guild's statistics (owner's name, online count).
    guildStats.task,
    // Each shard's session and the guilds changed, saved for the next process (gateway-sessions.ts).
    sessions.task,
    // The history keeps UP_HISTORY_DAYS: what is older goes now and every few hours.
    historyPruner({ history, webhooks, watches: new UpWatchRepository(services.store), logger, now }),
    // One host of several answers the ups of hosts that are gone (hosts/adopt.ts).
    ...(services.host
      ? [
          adoptOrphanedUps({
            hosts: services.host,
            journal,
            answer: recover,
            logger,
            silentMs: sharding.hostGoneAfterMs,
            // Looked for twice within the silence, so a gone host's ups wait at most one and a half of it.
            everyMs: Math.min(ADOPT_EVERY_MS, Math.round(sharding.hostGoneAfterMs / 2)),
            onOrphans: (shards) => ownership.setOrphans(shards),
          }),
        ]
      : []),
  ];
}

/**
 * The digests' and live leaderboards' engines, built once for the bot (app/deps.ts): their outbox
 * runners, and `posts` for the handlers (/settings) and the ups (the live board's refresh).
 */
import type { REST } from 'discord.js';
import type { GuildFactsLookup } from '../../discord/guild-posts.js';
import type { ServerPosts } from '../../interactions/types.js';
import type { Logger } from '../../log/logger.js';
import type { ChartRequest } from '../../render/chart-spec.js';
import { DigestRepository } from '../../store/digests.js';
import type { HistoryRepository } from '../../store/history.js';
import { LiveBoardRepository } from '../../store/live-boards.js';
import type { SettingsRepository } from '../../store/settings.js';
import type { Store } from '../../store/store.js';
import { LiveBoardScheduler, LiveBoardSender } from './live.js';
import { planDigest } from './plan.js';
import { DigestScheduler, DigestSender } from './send.js';

export interface PostEngines {
  posts: ServerPosts;
  digests: DigestScheduler;
  liveBoards: LiveBoardScheduler;
}

export function postEngines(options: {
  store: Store;
  settings: SettingsRepository;
  history: HistoryRepository;
  rest: REST;
  charts: { render(request: ChartRequest): Promise<Buffer> };
  guild: GuildFactsLookup;
  owner: string;
  ownsGuild: ((guildId: string) => boolean) | undefined;
  leaseMs: number;
  logger: Logger;
  now: () => number;
}): PostEngines {
  const { store, settings, history, rest, guild, owner, ownsGuild, leaseMs, logger, now } = options;
  const digestRepository = new DigestRepository(store);
  const boardRepository = new LiveBoardRepository(store);
  const runner = { owner, ownsGuild, leaseMs, logger, now };
  const digests = new DigestScheduler({
    ...runner,
    digests: digestRepository,
    sender: new DigestSender({
      rest,
      settings,
      history,
      digests: digestRepository,
      charts: options.charts,
      guild,
      logger,
      now,
    }),
  });
  const liveBoards = new LiveBoardScheduler({
    ...runner,
    boards: boardRepository,
    sender: new LiveBoardSender({ rest, settings, history, boards: boardRepository, guild, now }),
  });
  const wakeDigests = (dueAt: number): void => digests.wake(dueAt);
  return {
    digests,
    liveBoards,
    posts: {
      digests: digestRepository,
      liveBoards: boardRepository,
      wakeDigests,
      wakeLiveBoards: (dueAt) => liveBoards.wake(dueAt),
      planDigest: (settings, at) => planDigest({ digests: digestRepository, wakeDigests }, settings, at),
      async upRecorded(guildId, at) {
        try {
          const dueAt = await boardRepository.touch(guildId, at);
          if (dueAt !== undefined) liveBoards.wake(dueAt);
        } catch (err) {
          logger.warn({ err, guildId }, "could not note the up for the server's live leaderboard");
        }
      },
    },
  };
}

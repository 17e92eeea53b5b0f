/**
 * A restart's gateway sessions, resumed before the bot's modules have loaded. Loading them (the
 * discord.js client, the features, the commands: about a second on two busy cores) is most of a
 * restart's time with no shard connected, and a RESUME needs none of it: the token, the shards
 * and the saved sessions. So the entry point opens the store, reads the sessions and has the
 * gateway's thread (started before the rest loads: main.ts) resume them, then loads the bot.
 * Until the bot has restored the guilds and taken the thread over (GatewayThreadStrategy:
 * `attach`, `go`), the thread keeps what Discord replays, and defers each command in it itself,
 * by the deferral table that needs no command loaded (commands/definitions.ts).
 *
 * Only where the configuration says which shards this process runs (a SHARD_COUNT, not auto) and
 * no other host may hold them: one host of several (SHARD_IDS) claims its shards in the store
 * before it may connect them (createServices), and resumes them after that claim, as the bot
 * always did.
 */
import type { SessionInfo } from '@discordjs/ws';
import { DEFERRAL_RULES } from '../../commands/definitions.js';
import type { Config } from '../config/env.js';
import { expectedShards } from '../config/sharding.js';
import type { PrestartedThread } from '../gateway/gateway-thread-start.js';
import { loadSaved, resumable } from '../gateway/saved-sessions.js';
import type { Logger } from '../log/logger.js';
import { GatewaySessionRepository, type GatewaySnapshot, type Store } from '../store/index.js';

/** The shards' saved sessions as read, for the bot's sessions keeper (not read again). */
export interface SessionsRead {
  shardIds: readonly number[];
  shardCount: number;
  loaded: Map<number, GatewaySnapshot>;
}

/**
 * Reads the sessions and has `thread` resume those that can be; undefined where this process may
 * not (see above), or when they could not be read.
 */
export async function resumeEarly(options: {
  config: Config;
  store: Store;
  logger: Logger;
  thread: PrestartedThread;
  now?: () => number;
}): Promise<SessionsRead | undefined> {
  const { config, logger } = options;
  const shards = expectedShards(config.sharding);
  const token = config.discord.token;
  if (!shards || config.sharding.hostShards !== undefined || !token) return undefined;
  let loaded: Map<number, GatewaySnapshot>;
  try {
    loaded = await loadSaved(
      new GatewaySessionRepository(options.store),
      shards,
      (options.now ?? Date.now)(),
    );
  } catch {
    // Said by the sessions keeper, which reads them again.
    return undefined;
  }
  const sessions: Record<number, SessionInfo> = {};
  for (const [shardId, saved] of loaded) {
    const session = resumable(shardId, shards.shardCount, saved)?.session;
    if (session) sessions[shardId] = session;
  }
  const resuming = Object.keys(sessions).map(Number);
  if (resuming.length > 0) {
    logger.info({ shards: resuming }, 'resuming the saved gateway sessions while the bot loads');
    options.thread.resume({
      token,
      shardIds: [...shards.shardIds],
      shardCount: shards.shardCount,
      sessions,
      rules: DEFERRAL_RULES,
      api: config.discord.apiUrl,
    });
  }
  return { ...shards, loaded };
}

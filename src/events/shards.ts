/**
 * The gateway connection's changes, each at debug (gateway/gateway-health.ts tells the operator
 * when they begin and end); a close after which discord.js will
 * not reconnect is fatal and told to `onFatal` (the process should end: the operator must act).
 * The sessions begun are counted where Discord's READY and RESUMED arrive (the gateway's strategy,
 * InteractionTap.onSession): discord.js's shardReady also follows a session restored from the store.
 */
import { type Client, Events, Status } from 'discord.js';
import type { Logger } from '../log/logger.js';

/** Gateway close codes after which discord.js will not reconnect and the operator must act. */
export const FATAL_CLOSE_CODES: Record<number, string> = {
  4004: 'Discord rejected the bot token (gateway close 4004): check DISCORD_TOKEN',
  4010: 'Discord rejected the shard configuration (gateway close 4010): check SHARD_COUNT',
  4011: 'Discord requires sharding for this many guilds (gateway close 4011)',
  4013: 'Discord rejected the intents (gateway close 4013)',
  4014: 'Discord refused the intents as not allowed (gateway close 4014)',
};

export function watchShards(client: Client, logger: Logger, onFatal?: (reason: string) => void): void {
  client.on(Events.ShardDisconnect, (event, shardId) => {
    const fatal = FATAL_CLOSE_CODES[event.code];
    if (fatal) {
      logger.fatal({ shardId, code: event.code }, fatal);
      onFatal?.(fatal);
    } else {
      logger.warn({ shardId, code: event.code }, 'shard disconnected');
    }
  });
  // Each close and resume at debug: the operator's lines are one per state change of the whole
  // gateway (gateway/gateway-health.ts), not one per shard per reconnect.
  client.on(Events.ShardResume, (shardId, replayed) => {
    logger.debug({ shardId, replayed }, 'shard resumed');
  });
  client.on(Events.ShardReconnecting, (shardId) => logger.debug({ shardId }, 'shard reconnecting'));
  client.on(Events.Warn, (message) => logger.warn({ source: 'discord.js' }, message));
  client.on(Events.Error, (err) => logger.error({ err }, 'discord.js error'));
}

/**
 * `then` once discord.js is ready and every shard's session is live: a session restored from the
 * store makes discord.js ready before its shard has resumed (gateway/gateway-sessions.ts), and a
 * restored session Discord refused ends with the shard identifying instead.
 */
export function onceConnected(client: Client, sessions: { resuming(): boolean }, then: () => void): void {
  let connected = false;
  const check = (): void => {
    if (connected || !client.isReady() || sessions.resuming()) return;
    if (client.ws.shards.some((shard) => shard.status !== Status.Ready)) return;
    connected = true;
    then();
  };
  client.once(Events.ClientReady, check);
  client.on(Events.ShardResume, check);
  client.on(Events.ShardReady, check);
}

/**
 * What the bot's own posts in a server (a reminder, a webhook event's announcement) read of the
 * guild, and what a failure to post means: tried again later, or given up with the problem the
 * server's admins can fix, for /settings show.
 */
import { type APIGuild, type APIMessageTopLevelComponent, type Client, type REST, Routes } from 'discord.js';
import type { Logger } from '../log/logger.js';
import type { MessageFile } from '../render/message.js';
import type { GuildProblem } from '../store/schema.js';
import type { SendOutcome } from '../tasks/outbox.js';
import { bounded } from '../time/bounded.js';
import { type PostFailure, postMessage } from './messages.js';

/** What a post reads of a guild: from discord.js's guild cache, or asked of Discord. */
export interface GuildFacts {
  name: string;
  preferredLocale: string | null;
}

/** Looks a guild's facts up; undefined when Discord does not tell. */
export type GuildFactsLookup = (guildId: string) => GuildFacts | undefined | Promise<GuildFacts | undefined>;

const GUILD_FACTS_BOUND_MS = 3_000;

/**
 * A server's name and language for a post: from the cache of this process's shards, else (a gone
 * host's server, hosts/adopt.ts) asked of Discord, which answers any host of the bot, within 3 s.
 */
export function guildFactsLookup(client: Client, logger: Logger): GuildFactsLookup {
  return async (guildId) => {
    const cached = client.guilds.cache.get(guildId);
    if (cached) return { name: cached.name, preferredLocale: cached.preferredLocale };
    try {
      // Left to run past the bound, unaborted (see bounded.ts).
      const guild = (await bounded(
        () => client.rest.get(Routes.guild(guildId)),
        GUILD_FACTS_BOUND_MS,
      )) as APIGuild;
      return { name: guild.name, preferredLocale: guild.preferred_locale };
    } catch (err) {
      logger.debug({ guildId, err: String(err) }, "a server's name could not be read for its post");
      return undefined;
    }
  };
}

/** The problem to record for a failure that admins must fix, or undefined for one that may pass. */
export function problemOf(failure: PostFailure): GuildProblem | undefined {
  switch (failure.kind) {
    case 'channel-deleted':
      return 'channel-deleted';
    case 'missing-access':
      return 'missing-permission:ViewChannel';
    case 'missing-permission':
      return 'missing-permission:SendMessages';
    default:
      return undefined;
  }
}

/** A failed post: tried again when it may pass, else given up, with the problem to record if any. */
export function failedPost(failure: PostFailure): {
  outcome: SendOutcome;
  problem: GuildProblem | undefined;
} {
  if (failure.kind === 'transient')
    return {
      outcome: { kind: 'retry', detail: `discord ${failure.status ?? 'unreachable'}` },
      problem: undefined,
    };
  const problem = problemOf(failure);
  const reason = problem ?? `${failure.kind}:${'code' in failure ? failure.code : ''}`;
  return { outcome: { kind: 'failed', reason }, problem };
}

/**
 * A failed post of the server's own (a reminder, a digest, a streak notice): the problem admins
 * must fix is recorded on the server's settings (for /settings show and the next /up of a manager;
 * a store that fails costs the record, one warn line), and the outbox's outcome is returned.
 */
export async function settleFailedPost(
  failure: PostFailure,
  record: { guildId: string; settings: ProblemRecorder; logger: Logger; now: number; what: string },
): Promise<SendOutcome> {
  const { outcome, problem } = failedPost(failure);
  if (problem) {
    const { guildId, logger } = record;
    await record.settings.update(guildId, { problem }, record.now).catch((err: unknown) => {
      logger.warn({ err, guildId, problem }, `could not record a ${record.what} problem`);
    });
  }
  return outcome;
}

/**
 * A layout of the server's own posted for a claimed piece of work (a digest, a streak notice):
 * pinging nobody, with the claim's nonce (one message however often it is tried), and a failure
 * settled as settleFailedPost says.
 */
export async function postForServer(
  rest: REST,
  channelId: string,
  message: { layout: APIMessageTopLevelComponent[]; files?: MessageFile[] | undefined },
  nonce: string,
  record: Parameters<typeof settleFailedPost>[1],
): Promise<SendOutcome> {
  const posted = await postMessage(rest, channelId, {
    layout: message.layout,
    ...(message.files ? { files: message.files } : {}),
    allowedMentions: { parse: [] },
    nonce,
  });
  return posted.ok ? { kind: 'sent' } : settleFailedPost(posted.failure, record);
}

/** Where a server's problems are kept (store/settings.ts SettingsRepository). */
export interface ProblemRecorder {
  update(guildId: string, change: { problem: GuildProblem | null }, now: number): Promise<unknown>;
}

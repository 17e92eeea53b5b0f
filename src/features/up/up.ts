/**
 * The /up use case: raise a server in the directory for the person who asked. The command runs it
 * from an interaction (gathering the guild's statistics as the directory's own bot does, journaled
 * until the directory has answered); the recovery after a restart (recover.ts) sends the same up
 * again from the journal. Both word the directory's answer the same way.
 */
import type { DirectoryClient, ServerStatistics, ServerUpResult } from '../../directory/index.js';
import type { DiscordLookups } from '../../discord/lookups.js';
import type { Translate } from '../../i18n/index.js';
import type { Logger } from '../../log/logger.js';
import type { RenderedMessage } from '../../render/message.js';
import { renderUpResult, type UpOutcome, upOutcome } from '../../render/up.js';
import type { PendingUp, UpJournal } from './journal.js';

/** What an up needs: a part of the handlers' deps (interactions/types.ts). */
export interface UpDeps {
  directory: Pick<DirectoryClient, 'postServer'>;
  discord: Pick<DiscordLookups, 'guildStats'>;
  journal: UpJournal;
  logger: Logger;
  now: () => number;
}

export interface UpAnswer {
  outcome: UpOutcome;
  message: RenderedMessage;
  /** Only a success is shown to the channel; "not yet" and "not updated" are for the person. */
  publicly: boolean;
}

/** POST /server with up=1 at interactive priority, done by `deadline`. Throws the directory's errors. */
export function sendUp(
  directory: UpDeps['directory'],
  up: PendingUp,
  deadline: number,
  stats: ServerStatistics = {},
): Promise<ServerUpResult> {
  return directory.postServer(
    {
      serverId: up.guildId,
      up: true,
      botPresent: true,
      ...stats,
      upUserId: up.userId,
      upChannelId: up.channelId,
      upChannelName: up.channelName,
    },
    { priority: 'interactive', deadline },
  );
}

export function upAnswer(result: ServerUpResult, t: Translate, now: number): UpAnswer {
  const outcome = upOutcome(result);
  return { outcome, message: renderUpResult(result, t, now), publicly: outcome === 'success' };
}

/**
 * An up asked for now. Journaled until the directory has answered: a restart in between still
 * answers (recover.ts). The up goes without the guild's statistics if they cannot be gathered in
 * time. Throws the directory's errors (the router tells them with describeUpFailure).
 */
export async function upNow(
  deps: UpDeps,
  up: PendingUp,
  options: { deadline: number; t: Translate },
): Promise<UpAnswer> {
  const { guildId } = up;
  await deps.journal
    .add(up)
    .catch((err: unknown) => deps.logger.warn({ err }, 'could not journal the up; it goes on'));
  let result: ServerUpResult;
  try {
    const stats = await deps.discord.guildStats(guildId, (err) =>
      deps.logger.debug({ err, guildId }, 'guild statistics not gathered; the up goes without them'),
    );
    result = await sendUp(deps.directory, up, options.deadline, stats);
  } finally {
    await deps.journal.remove(up.interactionId).catch((err: unknown) => {
      deps.logger.warn({ err }, 'could not update the journal of pending ups');
    });
  }
  const answer = upAnswer(result, options.t, deps.now());
  if (answer.outcome === 'notUpdated') {
    deps.logger.warn({ guildId, message: result.message }, 'the directory did not update the server');
  }
  return answer;
}

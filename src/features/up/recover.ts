/**
 * After a restart, answers the /up requests the previous process did not finish (see
 * journal.ts). The up is sent again: if the first one reached the directory, its cooldown
 * refuses this one (no server is raised twice) and the person is told what the directory says
 * now; if it did not, the server is raised now. Interactions too old to answer are dropped.
 */
import type { REST } from '@discordjs/rest';
import { MessageFlags, Routes } from 'discord.js';
import type { DirectoryClient } from '../../directory/client.js';
import { translator } from '../../i18n/index.js';
import { describeError, errorMessage } from '../../interactions/error-message.js';
import { NO_MENTIONS } from '../../interactions/respond.js';
import { INTERACTION_DEADLINE_MS } from '../../interactions/router.js';
import type { Logger } from '../../log/logger.js';
import type { RenderedMessage } from '../../render/message.js';
import { renderUpResult, upOutcome } from '../../render/up.js';
import type { PendingUp, UpJournal } from './journal.js';

export interface RecoverOptions {
  journal: UpJournal;
  directory: DirectoryClient;
  rest: REST;
  logger: Logger;
  now?: () => number;
}

function withNote(message: RenderedMessage, note: string): RenderedMessage {
  const [first, ...rest] = message.embeds;
  if (!first) return message;
  return { ...message, embeds: [{ ...first, footer: { text: note } }, ...rest] };
}

async function answer(
  rest: REST,
  entry: PendingUp,
  message: RenderedMessage,
  publicly: boolean,
): Promise<void> {
  const original = Routes.webhookMessage(entry.applicationId, entry.token, '@original');
  const body = { ...message, content: '', allowed_mentions: NO_MENTIONS };
  if (publicly) {
    await rest.patch(original, { body, auth: false });
    return;
  }
  // The public "thinking…" placeholder goes; the answer is for the person only.
  await rest.delete(original, { auth: false }).catch(() => undefined);
  await rest.post(Routes.webhook(entry.applicationId, entry.token), {
    body: { ...body, flags: MessageFlags.Ephemeral },
    auth: false,
  });
}

/** Returns how many pending ups were answered. Never throws. */
export async function recoverPendingUps(options: RecoverOptions): Promise<number> {
  const { journal, directory, rest, logger } = options;
  const now = options.now ?? Date.now;
  let entries: PendingUp[];
  try {
    entries = await journal.list();
  } catch (err) {
    logger.error({ err }, 'could not read the journal of pending ups');
    return 0;
  }
  let answered = 0;
  for (const entry of entries) {
    const deadline = entry.createdAt + INTERACTION_DEADLINE_MS;
    const log = { guildId: entry.guildId, userId: entry.userId, interactionId: entry.interactionId };
    try {
      if (now() >= deadline) {
        logger.info(log, 'a pending up from before the restart is too old to answer; dropped');
        continue;
      }
      const t = translator(entry.locale);
      let message: RenderedMessage;
      let publicly = false;
      try {
        const result = await directory.postServer(
          {
            serverId: entry.guildId,
            up: true,
            botPresent: true,
            upUserId: entry.userId,
            upChannelId: entry.channelId,
            upChannelName: entry.channelName,
          },
          { priority: 'interactive', deadline },
        );
        publicly = upOutcome(result) === 'success';
        message = withNote(renderUpResult(result, t, now()), t('up.afterRestart'));
        logger.info({ ...log, outcome: upOutcome(result) }, 'answered an up from before the restart');
      } catch (err) {
        const described = describeError(err, t, now(), { subject: 'server', action: 'up' });
        logger[described.level](
          { ...log, err, code: described.code },
          'an up from before the restart failed',
        );
        message = withNote(errorMessage(described, t, 'up'), t('up.afterRestart'));
      }
      await answer(rest, entry, message, publicly);
      answered++;
    } catch (err) {
      logger.warn({ ...log, err }, 'could not answer an up from before the restart');
    } finally {
      await journal.remove(entry.interactionId).catch((err: unknown) => {
        logger.error({ err }, 'could not update the journal of pending ups');
      });
    }
  }
  return answered;
}

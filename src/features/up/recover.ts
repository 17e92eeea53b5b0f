/**
 * After a restart, answers the /up requests the previous process did not finish (see
 * journal.ts). The up is sent again: if the first one reached the directory, its cooldown
 * refuses this one (no server is raised twice) and the person is told what the directory says
 * now; if it did not, the server is raised now. Interactions too old to answer are dropped.
 */
import type { REST } from '@discordjs/rest';
import type { DirectoryClient } from '../../directory/index.js';
import { translator } from '../../i18n/index.js';
import { responderForToken } from '../../interactions/respond.js';
import { INTERACTION_DEADLINE_MS } from '../../interactions/router.js';
import type { Logger } from '../../log/logger.js';
import type { RenderedMessage } from '../../render/message.js';
import { describeUpFailure } from './failure.js';
import type { PendingUp, UpJournal } from './journal.js';
import { type HistoryDeps, type ReminderDeps, recordUp, scheduleReminder, sendUp, upAnswer } from './up.js';

export interface RecoverOptions {
  journal: UpJournal;
  directory: Pick<DirectoryClient, 'postServer'>;
  rest: REST;
  logger: Logger;
  now?: () => number;
  /** Where the server's reminder follows the answer (as for an /up answered at once). */
  reminders?: ReminderDeps['reminders'];
  wakeReminders?: ReminderDeps['wakeReminders'];
  /** Where a success is recorded (as for an /up answered at once). */
  history?: HistoryDeps['history'];
  /** These entries (taken over from a host that died) instead of the journal's own list. */
  entries?: PendingUp[];
}

function withNote(message: RenderedMessage, note: string): RenderedMessage {
  const [first, ...rest] = message.embeds;
  if (!first) return message;
  return { ...message, embeds: [{ ...first, footer: { text: note } }, ...rest] };
}

/** Returns how many pending ups were answered. Never throws. */
export async function recoverPendingUps(options: RecoverOptions): Promise<number> {
  const { journal, directory, rest, logger } = options;
  const now = options.now ?? Date.now;
  let entries: PendingUp[];
  try {
    entries = options.entries ?? (await journal.list());
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
        const answer = upAnswer(await sendUp(directory, entry, deadline), t, now());
        const answeredAt = now();
        publicly = answer.publicly;
        if (options.reminders) {
          await scheduleReminder(
            { reminders: options.reminders, wakeReminders: options.wakeReminders ?? (() => {}), logger, now },
            entry.guildId,
            answer,
            answeredAt,
          );
        }
        await recordUp({ history: options.history, logger }, entry, answer, answeredAt);
        message = withNote(answer.message, t('up.afterRestart'));
        logger.info({ ...log, outcome: answer.outcome }, 'answered an up from before the restart');
      } catch (err) {
        const failure = describeUpFailure(err, t, now());
        logger[failure.described.level](
          { ...log, err, code: failure.described.code },
          'an up from before the restart failed',
        );
        message = withNote(failure.message, t('up.afterRestart'));
      }
      const reply = responderForToken(rest, entry.applicationId, entry.token);
      await (publicly ? reply.public(message) : reply.private(message));
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

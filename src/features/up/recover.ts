/**
 * After a restart, answers the /up requests the previous process did not finish (the journal,
 * store/journal.ts). The up is decided again (up.ts): if the first one reached the directory, its
 * cooldown refuses this one (no server is raised twice) and the person is told what the directory
 * says now; if it did not, the server is raised now. The answer is the message the live /up would
 * have sent, in the same languages, with a footer saying it comes after a restart. Interactions
 * too old to answer are dropped.
 */
import type { REST } from '@discordjs/rest';
import { type Translate, translator } from '../../i18n/index.js';
import { responderForToken } from '../../interactions/respond.js';
import { INTERACTION_DEADLINE_MS } from '../../interactions/router.js';
import type { EmbedMessage } from '../../render/message.js';
import type { PendingUp } from '../../store/journal.js';
import { describeUpFailure } from './failure.js';
import { answerUp, decideUp, readSettings, type UpDecision, type UpDeps } from './up.js';

export interface RecoverOptions extends UpDeps {
  rest: REST;
  /** These entries (taken over from a host that died) instead of the journal's own list. */
  entries?: PendingUp[];
}

function withNote(message: EmbedMessage, note: string): EmbedMessage {
  const [first, ...rest] = message.embeds;
  if (!first) return message;
  return { ...message, embeds: [{ ...first, footer: { text: note } }, ...rest] };
}

/** Returns how many pending ups were answered. Never throws. */
export async function recoverPendingUps(options: RecoverOptions): Promise<number> {
  const { journal, rest, logger, now } = options;
  let entries: PendingUp[];
  try {
    // Not the ups this process is answering itself: a /up that came as the recovery began is
    // journaled too, and sending it twice would answer its presser with the second's "not yet".
    entries = (options.entries ?? (await journal.list())).filter(
      (entry) => !journal.inFlight?.(entry.interactionId),
    );
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
      const person = translator(entry.locale);
      const reply = responderForToken(rest, entry.applicationId, entry.token);
      const settings = readSettings(options, entry.guildId);
      const note = (message: EmbedMessage, t: Translate) => withNote(message, t('up.afterRestart'));
      let decision: UpDecision;
      try {
        decision = await decideUp(options, entry, { deadline, journaled: true, gatherStats: false });
      } catch (err) {
        const failure = describeUpFailure(err, person, now());
        logger[failure.described.level](
          { ...log, err, code: failure.described.code },
          'an up from before the restart failed',
        );
        await reply.private(note(failure.message, person));
        answered++;
        continue;
      }
      await answerUp(decision, { reply, person, settings, guildLocale: entry.guildLocale }, now(), note);
      logger.info({ ...log, outcome: decision.outcome }, 'answered an up from before the restart');
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

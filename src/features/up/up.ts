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
import type { HistoryRepository } from '../../store/history.js';
import type { ReminderRepository } from '../../store/reminders.js';
import { remindableTime, remindRow } from '../reminders/remind-button.js';
import type { PendingUp, UpJournal } from './journal.js';

/** Where an answer's next-up time becomes the server's reminder. */
export interface ReminderDeps {
  reminders: Pick<ReminderRepository, 'scheduleGuild'>;
  /** The scheduler of this process: look again before `dueAt` if need be. */
  wakeReminders: (dueAt: number) => void;
}

/** Where a successful up is recorded (store/history.ts): /leaderboard reads it. */
export interface HistoryDeps {
  history?: Pick<HistoryRepository, 'record'> | undefined;
}

/** What an up needs: a part of the handlers' deps (interactions/types.ts). */
export interface UpDeps extends ReminderDeps, HistoryDeps {
  directory: Pick<DirectoryClient, 'postServer'>;
  discord: Pick<DiscordLookups, 'guildStats'>;
  journal: UpJournal;
  logger: Logger;
  now: () => number;
}

export interface UpAnswer {
  outcome: UpOutcome;
  /** The directory's answer, to word it again in another language (a public answer). */
  result: ServerUpResult;
  /** The next-up time a reminder can be set for (remind-button.ts), or null. */
  remindAt: number | null;
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

/** The answer, with the "Remind me" button when it carries a next-up time (a success, "not yet"). */
export function upAnswer(result: ServerUpResult, t: Translate, now: number): UpAnswer {
  const outcome = upOutcome(result);
  const remindAt = outcome === 'notUpdated' ? null : remindableTime(result.nextUpAt, now);
  const message = renderUpResult(result, t, now);
  if (remindAt !== null) message.components = [...message.components, remindRow(remindAt, t)];
  return { outcome, result, remindAt, message, publicly: outcome === 'success' };
}

/** A cooldown longer than this is not believed (the directory's is a few hours). */
const MAX_COOLDOWN_MS = 7 * 86_400_000;

/**
 * The server's reminder follows the directory's latest answer (the store's schedule; the latest
 * wins). Written before the journal lets go of the up: a process killed at any moment either
 * still has the up in its journal (the recovery asks the directory again and schedules from that
 * answer) or has the reminder in the store. Never throws: a store that fails costs the reminder
 * (one warn line), never the /up.
 */
export async function scheduleReminder(
  deps: ReminderDeps & Pick<UpDeps, 'logger' | 'now'>,
  guildId: string,
  answer: Pick<UpAnswer, 'remindAt' | 'outcome'>,
  answeredAt: number,
): Promise<void> {
  const { remindAt } = answer;
  if (remindAt === null) return;
  // A success says how long the directory makes a server wait after an up: what an up given
  // elsewhere (the directory's webhook) moves the reminder by.
  const cooldownMs =
    answer.outcome === 'success' && remindAt > answeredAt && remindAt - answeredAt <= MAX_COOLDOWN_MS
      ? remindAt - answeredAt
      : undefined;
  try {
    await deps.reminders.scheduleGuild(
      guildId,
      { dueAt: remindAt, nextUpAt: remindAt, cooldownMs },
      deps.now(),
    );
    deps.wakeReminders(remindAt);
  } catch (err) {
    deps.logger.warn({ err, guildId }, 'could not schedule the server reminder');
  }
}

/**
 * A success goes into the server's history, under the interaction's id: an up answered again
 * after a restart (recover.ts) is the same row. Written before the journal lets go of the up, as
 * the reminder is. Never throws: a store that fails costs the row (one warn line), never the /up.
 */
export async function recordUp(
  deps: HistoryDeps & Pick<UpDeps, 'logger'>,
  up: PendingUp,
  answer: UpAnswer,
  at: number,
): Promise<void> {
  if (!deps.history || answer.outcome !== 'success') return;
  try {
    await deps.history.record({
      id: `bot:${up.interactionId}`,
      guildId: up.guildId,
      userId: up.userId,
      at,
      upCount: Number.isFinite(answer.result.up) ? answer.result.up : null,
      source: 'bot',
    });
  } catch (err) {
    deps.logger.warn({ err, guildId: up.guildId }, 'could not record the up in the history');
  }
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
  let answer: UpAnswer;
  try {
    const stats = await deps.discord.guildStats(guildId, (err) =>
      deps.logger.debug({ err, guildId }, 'guild statistics not gathered; the up goes without them'),
    );
    answer = upAnswer(await sendUp(deps.directory, up, options.deadline, stats), options.t, deps.now());
    const answeredAt = deps.now();
    await scheduleReminder(deps, guildId, answer, answeredAt);
    await recordUp(deps, up, answer, answeredAt);
  } finally {
    await deps.journal.remove(up.interactionId).catch((err: unknown) => {
      deps.logger.warn({ err }, 'could not update the journal of pending ups');
    });
  }
  const { result } = answer;
  if (answer.outcome === 'notUpdated') {
    deps.logger.warn({ guildId, message: result.message }, 'the directory did not update the server');
  }
  return answer;
}

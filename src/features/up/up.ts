/**
 * The /up use case: raise a server in the directory for the person who asked, decided once and
 * answered once, whether the up is answered live (commands/up.ts) or after a restart from the
 * journal (recover.ts).
 *
 * - `decideUp` sends the up (journaled until the directory has answered, with the guild's
 *   statistics when they can be gathered in time), moves the server's reminder and records a
 *   success in the history. It returns the decision, not a message: the directory's errors are
 *   thrown.
 * - `answerUp` renders the decision once, in the language of whoever reads it (a success is
 *   public, in the server's public language; "not yet" and "not updated" are for the presser, in
 *   theirs), through a Responder: the live interaction's or the journaled token's. The two paths
 *   send the same message.
 */

import type { DirectoryClient, ServerStatistics, ServerUpResult } from '../../directory/index.js';
import type { DiscordLookups } from '../../discord/lookups.js';
import type { Translate } from '../../i18n/index.js';
import { publicTranslator } from '../../i18n/public-language.js';
import type { Responder } from '../../interactions/types.js';
import type { Logger } from '../../log/logger.js';
import { delayText } from '../../render/delay.js';
import type { EmbedMessage, RenderedMessage } from '../../render/message.js';
import { renderUpResult, type UpOutcome, upOutcome } from '../../render/up.js';
import { type HistoryRepository, type TimedUpRow, UP_HISTORY_MS } from '../../store/history.js';
import type { PendingUp, UpJournal } from '../../store/journal.js';
import type { ReminderRepository } from '../../store/reminders.js';
import type { GuildSettings, SettingsRepository } from '../../store/settings.js';
import { memberStreak, STREAK_GRACE_MS, serverStreak } from '../history/streaks.js';
import { remindableTime, remindRow } from '../reminders/remind-button.js';
import { creditUp } from './follows.js';
import { thanksLine } from './thanks.js';

/** What an up needs: a part of the handlers' deps (interactions/types.ts BotDeps). */
export interface UpDeps {
  /** Its `forget`, when it has one: the directory's record of the server is stale once upped. */
  directory: Pick<DirectoryClient, 'postServer'> & Partial<Pick<DirectoryClient, 'forget'>>;
  discord: Pick<DiscordLookups, 'guildStats'>;
  journal: UpJournal;
  /** Each server's reminder follows the directory's latest answer. */
  reminders: Pick<ReminderRepository, 'scheduleGuild' | 'getGuild'>;
  /** The reminder scheduler of this process: look again before `dueAt` if need be. */
  wakeReminders: (dueAt: number) => void;
  /**
   * A success follows the server's posted reminder through (features/reminders/engines.ts): how
   * long after the reminder it came, when there was one.
   */
  followUp?: (guildId: string, up: { userId: string; at: number }) => Promise<number | undefined>;
  /**
   * A success was recorded: what follows from an up (the live leaderboard, reward roles) is told.
   * Never throws.
   */
  upRecorded?: (guildId: string, userId: string, at: number) => Promise<void>;
  /**
   * Where a success is recorded (store/history.ts): /leaderboard reads it. `holdUntilRoom`: an up
   * and its reminder refused for lack of room on the SQLite file's disk are written once there is.
   */
  history: Pick<HistoryRepository, 'record' | 'timed'> & Partial<Pick<HistoryRepository, 'holdUntilRoom'>>;
  /** The server's public language (/settings language). */
  settings: Pick<SettingsRepository, 'get'>;
  logger: Logger;
  now: () => number;
}

/** What the directory decided of an up, before anyone words it. */
export interface UpDecision {
  outcome: UpOutcome;
  result: ServerUpResult;
  /** The next-up time a reminder can be set for (remind-button.ts), or null. */
  remindAt: number | null;
  /** Only a success is shown to the channel; "not yet" and "not updated" are for the person. */
  publicly: boolean;
  /** A success that followed the server's reminder: how long after it (ms); else null. */
  reactionMs: number | null;
  /** A success: the server's ups (its streaks, features/history/streaks.ts), this one among them. */
  streaks?: StreakFacts;
  /** Who pressed /up (set once decided). */
  uppedBy?: string;
}

/** What an up's answer says of the streaks from: the server's history, this up in it. */
export interface StreakFacts {
  ups: TimedUpRow[];
  userId: string;
  at: number;
}

/** A cooldown longer than this is not believed (the directory's is a few hours). */
const MAX_COOLDOWN_MS = 7 * 86_400_000;

/** POST /server with up=1 at critical priority (before look-ups), done by `deadline`. Throws the directory's errors. */
function sendUp(
  directory: UpDeps['directory'],
  up: PendingUp,
  deadline: number,
  stats: ServerStatistics,
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
    { priority: 'critical', deadline },
  );
}

function decisionOf(result: ServerUpResult, now: number): UpDecision {
  const outcome = upOutcome(result);
  const remindAt = outcome === 'notUpdated' ? null : remindableTime(result.nextUpAt, now);
  return { outcome, result, remindAt, publicly: outcome === 'success', reactionMs: null };
}

/**
 * The server's reminder follows the directory's latest answer (the store's schedule; the latest
 * wins). Written before the journal lets go of the up: a process killed at any moment either
 * still has the up in its journal (the recovery asks the directory again and schedules from that
 * answer) or has the reminder in the store. Never throws: a store that fails costs the reminder
 * (one warn line), never the /up; a disk that is full only delays it (written once there is room,
 * unless a later schedule of the server's got there first).
 */
async function scheduleReminder(
  deps: UpDeps,
  guildId: string,
  decision: UpDecision,
  answeredAt: number,
): Promise<void> {
  const { remindAt } = decision;
  if (remindAt === null) return;
  // A success says how long the directory makes a server wait after an up: what an up given
  // elsewhere (the directory's webhook) moves the reminder by.
  const cooldownMs =
    decision.outcome === 'success' && remindAt > answeredAt && remindAt - answeredAt <= MAX_COOLDOWN_MS
      ? remindAt - answeredAt
      : undefined;
  const schedule = async (): Promise<void> => {
    await deps.reminders.scheduleGuild(
      guildId,
      { dueAt: remindAt, nextUpAt: remindAt, cooldownMs },
      deps.now(),
    );
    deps.wakeReminders(remindAt);
  };
  try {
    await schedule();
  } catch (err) {
    const later = async (): Promise<void> => {
      // Written later: a newer schedule (another up, the directory's webhook) is not undone.
      const current = await deps.reminders.getGuild(guildId);
      if (current && current.nextUpAt >= remindAt) return;
      await schedule();
    };
    if (deps.history.holdUntilRoom?.(err, `reminder:${guildId}`, later)) {
      // Debug: the store's own line says the disk is full, once (store/health.ts), not once per write.
      deps.logger.debug({ guildId }, 'the disk is full: the server reminder is scheduled once there is room');
      return;
    }
    deps.logger.warn({ err, guildId }, 'could not schedule the server reminder');
  }
}

/**
 * A success goes into the server's history, under the interaction's id: an up answered again
 * after a restart is the same row. Written before the journal lets go of the up, as the reminder
 * is. Never throws: a store that fails costs the row (one warn line), never the /up; a disk that
 * is full only delays it: held, and recorded (once: the id) with what follows from it once there
 * is room.
 */
async function recordUp(
  deps: UpDeps,
  up: PendingUp,
  decision: UpDecision,
  at: number,
  possibleAt: number | null,
): Promise<void> {
  if (decision.outcome !== 'success') return;
  const { directory } = deps;
  const forget = directory.forget && ((guildId: string) => void directory.forget?.('server', guildId));
  const record = {
    id: `bot:${up.interactionId}`,
    guildId: up.guildId,
    userId: up.userId,
    at,
    upCount: Number.isFinite(decision.result.up) ? decision.result.up : null,
    source: 'bot' as const,
    // Before it, the up was not possible: an older schedule than the directory's (no reaction).
    possibleAt: possibleAt !== null && possibleAt <= at ? possibleAt : null,
  };
  try {
    const credited = await creditUp({ ...deps, forget }, record);
    decision.reactionMs = credited.reactionMs;
    decision.streaks = {
      ups: await deps.history.timed(up.guildId, at - UP_HISTORY_MS),
      userId: up.userId,
      at,
    };
  } catch (err) {
    const later = async (): Promise<void> => {
      await creditUp({ ...deps, forget }, record);
    };
    if (deps.history.holdUntilRoom?.(err, record.id, later)) {
      // Debug: the store's own line says the disk is full, once (store/health.ts), not once per write.
      deps.logger.debug(
        { guildId: up.guildId },
        'the disk is full: the up is recorded in the history once there is room',
      );
      return;
    }
    deps.logger.warn({ err, guildId: up.guildId }, 'could not record the up in the history');
  }
}

export interface DecideOptions {
  /** The directory must have answered by then (ms epoch). */
  deadline: number;
  /**
   * The up is journaled already and its caller lets the journal go of it (an up answered after a
   * restart, recover.ts). Otherwise it is added first, so that a restart before the directory
   * answers still answers it, and removed once decided.
   */
  journaled?: boolean;
  /** Gather the guild's statistics (the live /up; the recovery sends without them, in a hurry). */
  gatherStats?: boolean;
}

/**
 * Sends the up, schedules the reminder and records the history, then lets the journal go of the
 * up. The directory's errors are thrown (the caller words them with describeUpFailure). The up goes without the guild's statistics if they cannot be gathered in
 * time.
 */
export async function decideUp(deps: UpDeps, up: PendingUp, options: DecideOptions): Promise<UpDecision> {
  const { guildId } = up;
  if (!options.journaled) {
    await deps.journal
      .add(up)
      .catch((err: unknown) => deps.logger.warn({ err }, 'could not journal the up; it goes on'));
  }
  let decision: UpDecision;
  // When the up became possible, as the server's reminder had it: read while the directory answers.
  const possibleAt = deps.reminders.getGuild(guildId).then(
    (reminder) => reminder?.nextUpAt ?? null,
    () => null,
  );
  try {
    const stats =
      options.gatherStats === false
        ? {}
        : await deps.discord.guildStats(guildId, (err) =>
            deps.logger.debug({ err, guildId }, 'guild statistics not gathered; the up goes without them'),
          );
    const result = await sendUp(deps.directory, up, options.deadline, stats);
    const answeredAt = deps.now();
    decision = decisionOf(result, answeredAt);
    decision.uppedBy = up.userId;
    await scheduleReminder(deps, guildId, decision, answeredAt);
    await recordUp(deps, up, decision, answeredAt, await possibleAt);
  } finally {
    if (!options.journaled) {
      await deps.journal.remove(up.interactionId).catch((err: unknown) => {
        deps.logger.warn({ err }, 'could not update the journal of pending ups');
      });
    }
  }
  if (decision.outcome === 'notUpdated') {
    deps.logger.warn(
      { guildId, message: decision.result.message },
      'the directory did not update the server',
    );
  }
  return decision;
}

/**
 * What a success says of the streaks: the server's and the member's when 2 or more, and the one
 * this up ended (a late up ends the server's; a day missed, the member's), said as it ends.
 */
export function streakLines(facts: StreakFacts, timeZone: string, t: Translate): string[] {
  const { ups, userId, at } = facts;
  const server = serverStreak(ups, null, at);
  const times = ups.filter((u) => u.userId === userId).map((u) => u.at);
  const member = memberStreak(times, timeZone, at);
  const before = memberStreak(
    times.filter((time) => time !== at),
    timeZone,
    at,
  );
  const lines: string[] = [];
  if (server.ended && server.ended.at <= at)
    lines.push(
      t('up.streakServerEnded', { count: server.ended.length, grace: delayText(STREAK_GRACE_MS, t) }),
    );
  else if (server.current >= 2) lines.push(t('up.streakServer', { count: server.current }));
  if (before.current === 0 && before.last >= 2) lines.push(t('up.streakMemberEnded', { count: before.last }));
  else if (member.current >= 2) lines.push(t('up.streakMember', { count: member.current }));
  return lines;
}

/** An up this soon after the server's reminder is said on its answer ("⚡ 42 s after the reminder"). */
export const QUICK_UP_MS = 10 * 60_000;

/**
 * The decision in words, with the "Remind me" button when it carries a next-up time, and how
 * fast the up followed the server's reminder when that was quick.
 */
/** What the server's settings add to an /up's answer. */
export interface UpExtras {
  /** The server's time zone: whose days the member's streak counts (UTC when null). */
  timeZone?: string | null;
  /** The server's thank-you line, for a success (features/up/thanks.ts). */
  thanksTemplate?: string | null;
  /** The server's name, for the thank-you line. */
  serverName?: string | null;
}

export function renderUpDecision(
  decision: UpDecision,
  t: Translate,
  now: number,
  extras: UpExtras = {},
): EmbedMessage {
  const timeZone = extras.timeZone ?? null;
  const message = renderUpResult(decision.result, t, now);
  const { reactionMs } = decision;
  const [embed] = message.embeds;
  if (embed && reactionMs !== null && reactionMs >= 0 && reactionMs < QUICK_UP_MS) {
    embed.fields = [
      ...(embed.fields ?? []),
      {
        name: t('up.reaction'),
        value: t('up.reactionValue', { after: delayText(reactionMs, t) }),
        inline: true,
      },
    ];
  }
  const streaks = decision.streaks && streakLines(decision.streaks, timeZone ?? 'UTC', t);
  if (embed && streaks && streaks.length > 0) {
    embed.fields = [...(embed.fields ?? []), { name: t('up.streaks'), value: streaks.join('\n') }];
  }
  const userId = decision.uppedBy;
  if (embed && decision.outcome === 'success' && extras.thanksTemplate && userId) {
    // Without the history (a store that failed), the day of this up is the streak.
    const { at, ups } = decision.streaks ?? { at: now, ups: [{ userId, at: now }] };
    const line = thanksLine(
      extras.thanksTemplate,
      {
        userId,
        serverName: extras.serverName ?? null,
        ups: Number.isFinite(decision.result.up) ? decision.result.up : null,
        streakDays: memberStreak(
          ups.filter((u) => u.userId === userId).map((u) => u.at),
          timeZone ?? 'UTC',
          at,
        ).current,
      },
      t,
    );
    if (line !== '') embed.fields = [...(embed.fields ?? []), { name: t('up.thanks'), value: line }];
  }
  if (decision.remindAt !== null) {
    message.components = [...message.components, remindRow(decision.remindAt, t)];
  }
  return message;
}

/**
 * The server's settings for an answer: read while the directory answers, never failing (a store
 * that cannot be read costs the public language its setting: the server's own locale is used).
 */
export function readSettings(
  deps: Pick<UpDeps, 'settings' | 'logger'>,
  guildId: string,
): Promise<GuildSettings | undefined> {
  return deps.settings.get(guildId).catch((err: unknown): GuildSettings | undefined => {
    deps.logger.warn({ err, guildId }, 'could not read the server settings; the answer uses defaults');
    return undefined;
  });
}

/** Who reads an /up's answer and where it goes. */
export interface UpAudience {
  reply: Responder;
  /** The presser's language: what only they see. */
  person: Translate;
  /** The server's settings (its public language), read while the directory answered. */
  settings: Promise<GuildSettings | undefined>;
  /** The server's locale (Discord's guild_locale): the public language with `auto`. */
  guildLocale: string | null | undefined;
  /** The server's name, when known here (the thank-you line's `{server}`). */
  serverName?: string | null;
}

/** The server's public language for this up's answer. */
async function audienceTranslator(
  audience: Pick<UpAudience, 'settings' | 'guildLocale'>,
): Promise<Translate> {
  return publicTranslator(await audience.settings, audience.guildLocale);
}

/** Renders the decision once, in the reader's language, and sends it: public or private. */
export async function answerUp(
  decision: UpDecision,
  audience: UpAudience,
  now: number,
  dress: (message: EmbedMessage, t: Translate) => RenderedMessage = (message) => message,
): Promise<void> {
  const settings = await audience.settings;
  const extras: UpExtras = {
    timeZone: settings?.timeZone ?? null,
    thanksTemplate: settings?.thanksTemplate ?? null,
    serverName: audience.serverName ?? null,
  };
  if (decision.publicly) {
    const t = await audienceTranslator(audience);
    await audience.reply.public(dress(renderUpDecision(decision, t, now, extras), t));
  } else {
    const t = audience.person;
    await audience.reply.private(dress(renderUpDecision(decision, t, now, extras), t));
  }
}

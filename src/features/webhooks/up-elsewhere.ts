/**
 * An up the directory tells of (v2's `new_server_bump` webhook, v3's `up_added` notification over
 * its WebSocket or a webhook): what follows an up (features/up/follows.ts) for an up this bot did
 * not give, once per stored event (the announcer's claim):
 *
 * - credited in the history to the member, at the directory's time (source `webhook` or `notify`;
 *   the same member's /up through this bot within SAME_UP_MS is that up, told again), with the
 *   reaction time, the leaderboard, reward roles and digests following, and the look-up cache's
 *   record of the server dropped;
 * - the reminder cycle restarted from the directory's next possible up (follows.ts restartCycle);
 * - v3: the /up answers waiting for it (store/notifications.ts, up_watches) followed up, privately,
 *   "upped by …"; and the server's thank-you line (/settings thanks), when it has one, posted in its
 *   reminder channel with the claim's nonce (a copy after a crash is dropped) and no ping.
 *
 * Each step is idempotent (the history's id, the reminder's latest-wins schedule, the watches taken
 * in one statement, the nonce): a claim taken over after `kill -9` does again what was not done,
 * and nothing twice.
 */
import type { REST } from 'discord.js';
import type { GuildFactsLookup } from '../../discord/guild-posts.js';
import { followUpByToken, postMessage } from '../../discord/messages.js';
import { translator } from '../../i18n/index.js';
import { publicTranslator } from '../../i18n/public-language.js';
import type { Logger } from '../../log/logger.js';
import { renderUpSeen } from '../../render/up-v3.js';
import type { HistoryRepository } from '../../store/history.js';
import type { UpWatchRepository } from '../../store/notifications.js';
import type { ReminderRepository } from '../../store/reminders.js';
import type { SettingsRepository } from '../../store/settings.js';
import type { StoredEvent } from '../../store/webhooks.js';
import type { SendOutcome } from '../../tasks/outbox.js';
import { memberStreak } from '../history/streaks.js';
import { type CreditDeps, creditUp, restartCycle } from '../up/follows.js';
import { thanksLine } from '../up/thanks.js';
import type { DirectoryEvent } from './events.js';

export type UpEvent = Extract<DirectoryEvent, { kind: 'bump' }>;

export interface UpElsewhereDeps extends CreditDeps {
  rest: REST;
  history: Pick<HistoryRepository, 'record' | 'timed' | 'has'>;
  reminders: Pick<ReminderRepository, 'moveForUp' | 'getGuild' | 'scheduleGuild'>;
  settings: Pick<SettingsRepository, 'get'>;
  wakeReminders: (dueAt: number) => void;
  /** v3: the /up answers waiting for an up (none: nothing followed up). */
  watches?: Pick<UpWatchRepository, 'take'> | undefined;
  /** v3: the directory's cadence when no cooldown is known (follows.ts V3_UP_EVERY_MS). */
  cadenceMs?: number | undefined;
  guild: GuildFactsLookup;
  logger: Logger;
  now: () => number;
}

/** How far back the thank-you line's streak looks (a member's days in a row). */
const STREAK_LOOKBACK_MS = 400 * 86_400_000;

export async function upElsewhere(
  deps: UpElsewhereDeps,
  stored: StoredEvent,
  event: UpEvent,
  nonce: string | null,
): Promise<SendOutcome> {
  const { guildId } = stored;
  const { userId, at } = event;
  // When the up became possible (its reaction time, the server's streak), before it moves.
  // (Read at intake when the intake restarted the reminder as it stored the up.)
  const reminder = await deps.reminders.getGuild(guildId);
  const possibleAt = event.possibleAt !== undefined ? event.possibleAt : (reminder?.nextUpAt ?? null);
  const historyId = `hook:${stored.id}`;
  const credited = await creditUp(deps, {
    id: historyId,
    guildId,
    userId,
    at,
    upCount: event.upCount ?? null,
    source: event.via ?? 'webhook',
    possibleAt: possibleAt !== null && possibleAt <= at ? possibleAt : null,
  });
  // An up the intake stored with its reminder restarted in the same transaction (it carries
  // `possibleAt`) has its cycle where it belongs: read above. Else it is restarted here.
  const restarted =
    event.possibleAt !== undefined
      ? reminder && { nextUpAt: reminder.nextUpAt, dueAt: reminder.dueAt }
      : await restartCycle(deps, guildId, at, {
          cadenceMs: event.v3 ? deps.cadenceMs : undefined,
          now: deps.now(),
          current: reminder ?? null,
        });
  deps.logger.info(
    {
      guildId,
      recorded: credited.recorded,
      via: event.via ?? 'webhook',
      reminderMovedTo: restarted?.dueAt ?? null,
    },
    "an up given on the directory's side is recorded",
  );
  if (!event.v3) return { kind: 'sent' };
  await followWatches(deps, guildId, event, restarted?.nextUpAt ?? reminder?.nextUpAt);
  // Thanked once: recorded now, or recorded under this event's id by a process that died before
  // it thanked (the claim's nonce makes Discord return its post if it had it). An up this bot's
  // own /up recorded and thanked for already (another id) is not thanked again.
  const ours = credited.recorded || (await deps.history.has(historyId));
  return ours ? thank(deps, guildId, event, nonce) : { kind: 'sent' };
}

/** The /up answers that sent members to the directory's page: told who upped (privately, never a ping). */
async function followWatches(
  deps: UpElsewhereDeps,
  guildId: string,
  event: UpEvent,
  nextUpAt: number | undefined,
): Promise<void> {
  if (!deps.watches) return;
  const now = deps.now();
  const watches = await deps.watches.take(guildId, event.at, now);
  await Promise.all(
    watches.map(async (watch) => {
      const t = translator(watch.locale);
      const message = renderUpSeen(
        { userId: event.userId, at: event.at, upCount: event.upCount ?? null, nextUpAt: nextUpAt ?? null },
        t,
      );
      await followUpByToken(deps.rest, watch.applicationId, watch.token, message).catch((err: unknown) =>
        deps.logger.info(
          { err: String(err), guildId },
          'an /up answer could not be followed up (its token expired?)',
        ),
      );
    }),
  );
}

/** The server's thank-you line for an up given on the site, in its reminder channel. */
async function thank(
  deps: UpElsewhereDeps,
  guildId: string,
  event: UpEvent,
  nonce: string | null,
): Promise<SendOutcome> {
  const settings = await deps.settings.get(guildId);
  if (!settings?.thanksTemplate || !settings.reminderChannelId) return { kind: 'sent' };
  const facts = await deps.guild(guildId);
  const t = publicTranslator(settings, facts?.preferredLocale);
  const ups = await deps.history.timed(guildId, event.at - STREAK_LOOKBACK_MS, event.at + 1);
  const times = ups.filter((u) => u.userId === event.userId).map((u) => u.at);
  const line = thanksLine(
    settings.thanksTemplate,
    {
      userId: event.userId,
      serverName: facts?.name ?? null,
      // `{ups}` is the server's count after the up; v3's upCount is what this up gave (its boost):
      // not known here without asking the directory, so said as unknown (—).
      ups: null,
      streakDays: memberStreak(times, settings.timeZone ?? 'UTC', event.at).current,
    },
    t,
  );
  if (line === '') return { kind: 'sent' };
  const posted = await postMessage(deps.rest, settings.reminderChannelId, {
    content: line,
    allowedMentions: { parse: [] },
    ...(nonce ? { nonce } : {}),
  });
  if (posted.ok || posted.failure.kind !== 'transient') return { kind: 'sent' };
  return { kind: 'retry', detail: 'the thank-you line could not be posted' };
}

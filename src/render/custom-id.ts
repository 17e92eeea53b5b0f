/**
 * Every custom_id the bot puts on a button, written and read here: `<prefix>:<fields>`. A
 * button's state lives in its custom_id, not in memory, so buttons keep working after a restart.
 *
 * The comments pager: `comments:<mode>:<kind>:<id>:<page>`. mode o = open (new private message),
 * p = page (edit that message); the page has at most four digits (50,000 comments at five a page).
 * The "Remind me" button of /up (features/reminders/remind-button.ts): `remind:<next up, unix
 * seconds>`.
 */

/** The prefix a custom_id starts with (`comments`, `remind`): the button's name in the logs. */
export function customIdPrefix(customId: string): string {
  return customId.split(':', 1)[0] ?? '';
}

export type CommentsKind = 'bot' | 'server' | 'profile';
export interface CommentsState {
  mode: 'open' | 'page';
  kind: CommentsKind;
  id: string;
  page: number;
}

const KIND_CODE: Record<CommentsKind, string> = { bot: 'b', server: 's', profile: 'p' };
const CODE_KIND: Record<string, CommentsKind> = { b: 'bot', s: 'server', p: 'profile' };
const PREFIX = 'comments';

export function encodeComments(state: CommentsState): string {
  return [
    PREFIX,
    state.mode === 'open' ? 'o' : 'p',
    KIND_CODE[state.kind],
    state.id,
    String(state.page),
  ].join(':');
}

/** Returns null for anything that is not a well-formed comments custom_id (one spelling per state). */
export function decodeComments(customId: string): CommentsState | null {
  if (customId.length > 100) return null;
  const match = /^comments:([op]):([bsp]):([1-9]\d{16,19}):(0|[1-9]\d{0,3})$/.exec(customId);
  if (!match) return null;
  const [, mode, kind, id, page] = match as unknown as [string, string, string, string, string];
  const k = CODE_KIND[kind];
  if (!k) return null;
  return { mode: mode === 'o' ? 'open' : 'page', kind: k, id, page: Number(page) };
}

/** The custom_id for a state, or null when the state could not be decoded back (bad id or page). */
export function commentsCustomId(state: CommentsState): string | null {
  const customId = encodeComments(state);
  const back = decodeComments(customId);
  const same =
    back !== null &&
    back.mode === state.mode &&
    back.kind === state.kind &&
    back.id === state.id &&
    back.page === state.page;
  return same ? customId : null;
}

export function isCommentsId(customId: string): boolean {
  return customId.startsWith(`${PREFIX}:`);
}

const REMIND_PREFIX = 'remind';

/** The "Remind me" button's custom_id for a next up at `nextUpAt` (ms), in whole seconds rounded up. */
export function encodeRemind(nextUpAt: number): string {
  return `${REMIND_PREFIX}:${Math.ceil(nextUpAt / 1000)}`;
}

/** The next-up time in ms, or null for anything that is not a well-formed id. */
export function decodeRemind(customId: string): number | null {
  const match = /^remind:([1-9]\d{8,10})$/.exec(customId);
  if (!match) return null;
  const ms = Number(match[1]) * 1000;
  return Number.isSafeInteger(ms) ? ms : null;
}

export function isRemindId(customId: string): boolean {
  return customId.startsWith(`${REMIND_PREFIX}:`);
}

const NOTIFY_PREFIX = 'notify';

/** "Notify me" on a server's reminder: `notify:<guild id>` (the role is the server's setting then). */
export function encodeNotify(guildId: string): string {
  return `${NOTIFY_PREFIX}:${guildId}`;
}

export function decodeNotify(customId: string): string | null {
  return /^notify:(\d{15,21})$/.exec(customId)?.[1] ?? null;
}

export function isNotifyId(customId: string): boolean {
  return customId.startsWith(`${NOTIFY_PREFIX}:`);
}

/** What a member's own reminder offers: again in an hour, or no more (its buttons). */
export type ReminderAction = 'snooze' | 'stop';

const REMINDER_PREFIX = 'reminder';
const ACTION_CODES: Record<ReminderAction, string> = { snooze: 's', stop: 'x' };

/** `reminder:<s|x>:<guild id>:<user id>`: the member's reminder of that server. */
export function encodeReminderAction(action: ReminderAction, guildId: string, userId: string): string {
  return `${REMINDER_PREFIX}:${ACTION_CODES[action]}:${guildId}:${userId}`;
}

export function decodeReminderAction(
  customId: string,
): { action: ReminderAction; guildId: string; userId: string } | null {
  const match = /^reminder:([sx]):(\d{15,21}):(\d{15,21})$/.exec(customId);
  if (!match) return null;
  return { action: match[1] === 's' ? 'snooze' : 'stop', guildId: match[2] ?? '', userId: match[3] ?? '' };
}

export function isReminderActionId(customId: string): boolean {
  return customId.startsWith(`${REMINDER_PREFIX}:`);
}

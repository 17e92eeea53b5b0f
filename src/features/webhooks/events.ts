/**
 * What the directory's webhook delivers (README, "The directory's webhooks"),
 * checked before it steers anything: each known type's shape, ids that are Discord ids, times in
 * a sane range. A delivery carries no id of its own; what identifies an event (for recognizing
 * the same delivery twice) is its type, member and time, and for the directory's "test" button a
 * ten-second window (pressed twice at once: one "webhook connected").
 *
 * The bot types (`new_bot_comment`, ...) are for a bot's page; a server's URL receives them only
 * if someone pasted it on a bot's page. They are answered 2xx and dropped: this bot announces a
 * server's events, and a bot's page has no server channel to announce them in. So is a type the
 * directory may add later: 2xx, so it does not retry, and nothing stored.
 */
import { z } from 'zod';

/** The texts of a comment and its edits are cut to this before they are stored. */
export const MAX_COMMENT_TEXT = 4_000;
/** An event dated this far in the future is refused: the two clocks differ by less. */
const FUTURE_SLACK_MS = 10 * 60_000;
/** Discord's epoch (2015): no event of the directory is older. */
const OLDEST_MS = 1_420_070_400_000;
/** The directory's "test" button pressed again within this window is the same event. */
export const TEST_WINDOW_MS = 10_000;

const snowflake = z.string().regex(/^\d{17,20}$/);
const time = z.number().int().min(OLDEST_MS).max(8.64e15);
const vote = z.union([z.literal(-1), z.literal(0), z.literal(1), z.null()]).optional();
const text = z
  .string()
  .nullable()
  .optional()
  .transform((s) => (s == null ? null : s.slice(0, MAX_COMMENT_TEXT)));

const commentData = z.object({
  user: snowflake,
  at: time,
  comment: z
    .object({
      vote: z.object({ old: vote, new: vote }).optional(),
      old: text,
      new: text,
    })
    .optional(),
  reason: z.enum(['self', 'moderation']).nullable().optional(),
});

const bumpData = z.object({ user: snowflake, at: time });
const bonus = z.object({ status: z.boolean(), expiresAt: time.nullable().optional() }).nullable().optional();

export const SERVER_COMMENT_TYPES = {
  new_server_comment: 'new',
  edit_server_comment: 'edit',
  delete_server_comment: 'delete',
} as const;

const BOT_TYPES = new Set(['new_bot_comment', 'edit_bot_comment', 'delete_bot_comment', 'new_bot_bump']);

export type CommentChange = (typeof SERVER_COMMENT_TYPES)[keyof typeof SERVER_COMMENT_TYPES];

/** An event as stored and announced. */
export type DirectoryEvent =
  | {
      kind: 'comment';
      change: CommentChange;
      userId: string;
      at: number;
      vote: { old: number | null; new: number | null };
      text: { old: string | null; new: string | null };
      /** Deletions: by its author, or by the directory's moderators. */
      reason: 'self' | 'moderation' | null;
      /** v3: the review's rating (1 to 5; v2 has votes instead), its new one for an edit. */
      rating?: number | null;
      /** v3's notifications: one review per member, whose edit edits its announcement. */
      v3?: true;
    }
  | {
      kind: 'bump';
      userId: string;
      at: number;
      bonus: { status: boolean; expiresAt: number | null } | null;
      /** v3: the ups it gave (its boost multiplier included). */
      upCount?: number | null;
      /** How it came: a webhook (v2's or v3's), or v3's WebSocket notifications. Default webhook. */
      via?: 'webhook' | 'notify';
      /** v3's notifications: the directory's cadence restarts the reminder (features/notifications). */
      v3?: true;
      /**
       * When the up became possible, as the server's reminder had it when the up was stored (the
       * notifications' intake restarts the reminder as it stores the up: store/notifications.ts).
       */
      possibleAt?: number | null;
    }
  | { kind: 'test' };

export type Parsed =
  | { kind: 'event'; event: DirectoryEvent; type: string; id: string }
  /** Not for this bot (a bot's event, a type it does not know): answered, not stored. */
  | { kind: 'ignored'; reason: 'bot' | 'unknown'; type: string }
  | { kind: 'invalid' };

/** Checks a delivery's body for a server; `id` identifies the event among that server's. */
export function parseDelivery(body: unknown, guildId: string, receivedAt: number): Parsed {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { kind: 'invalid' };
  const type = (body as { type?: unknown }).type;
  if (typeof type !== 'string' || type.length === 0 || type.length > 64) return { kind: 'invalid' };
  const data = (body as { data?: unknown }).data;
  const event = eventOf(type, data, body);
  if (event === 'bot' || event === 'unknown') {
    return { kind: 'ignored', reason: event, type: /^[a-z_]{1,64}$/.test(type) ? type : 'unknown' };
  }
  if (event === undefined) return { kind: 'invalid' };
  if (event.kind !== 'test' && event.at > receivedAt + FUTURE_SLACK_MS) return { kind: 'invalid' };
  const what =
    event.kind === 'test'
      ? `test:${Math.floor(receivedAt / TEST_WINDOW_MS)}`
      : event.kind === 'bump'
        ? `bump:${event.userId}:${event.at}`
        : `${event.change}-comment:${event.userId}:${event.at}`;
  return { kind: 'event', event, type, id: `${guildId}:${what}` };
}

function eventOf(type: string, data: unknown, body: object): DirectoryEvent | 'bot' | 'unknown' | undefined {
  if (type === 'test_webhook_message') return { kind: 'test' };
  if (type === 'new_server_bump') {
    const parsed = bumpData.safeParse(data);
    const extra = bonus.safeParse((body as { bonus?: unknown }).bonus);
    if (!parsed.success) return undefined;
    const b = extra.success ? extra.data : null;
    return {
      kind: 'bump',
      userId: parsed.data.user,
      at: parsed.data.at,
      bonus: b ? { status: b.status, expiresAt: b.expiresAt ?? null } : null,
    };
  }
  if (Object.hasOwn(SERVER_COMMENT_TYPES, type)) {
    const parsed = commentData.safeParse(data);
    if (!parsed.success) return undefined;
    const d = parsed.data;
    const change = SERVER_COMMENT_TYPES[type as keyof typeof SERVER_COMMENT_TYPES];
    return {
      kind: 'comment',
      change,
      userId: d.user,
      at: d.at,
      vote: { old: d.comment?.vote?.old ?? null, new: d.comment?.vote?.new ?? null },
      text: { old: d.comment?.old ?? null, new: d.comment?.new ?? null },
      reason: change === 'delete' ? (d.reason ?? null) : null,
    };
  }
  return BOT_TYPES.has(type) ? 'bot' : 'unknown';
}

/** The stored form back (the store is ours, but a row from an older version must not crash). */
export function storedEvent(payload: string): DirectoryEvent | undefined {
  try {
    const value = JSON.parse(payload) as DirectoryEvent;
    return typeof value === 'object' && value !== null && 'kind' in value ? value : undefined;
  } catch {
    return undefined;
  }
}

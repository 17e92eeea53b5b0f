/**
 * What BotiCord v3 sends as notifications, checked before it steers anything: the WebSocket's
 * frames (`{event, data}`) and the HTTPS webhook's body. Sources: docs/directory-v3-sources.md §4;
 * fixtures: test/fixtures/directory-v3/ws-*.json, webhook-*.json, notify-payloads.json.
 *
 * Strict on what identifies an event (its type, the resource and user IDs, when it happened) and
 * tolerant of the payload, which is only shown: a field of the wrong type becomes null, anything
 * unknown is left out. Nothing here throws, whatever the input; no unknown field, and never the
 * webhook's `webhookSettings` (it carries the owner's API key), is copied into a result.
 */
import { z } from 'zod';
import { SNOWFLAKE_PATTERN } from '../refs.js';

/** The types the sources list; "BotiCord may also send other notifications", so others pass too. */
export const KNOWN_NOTIFY_TYPES = ['up_added', 'comment_added', 'comment_edited', 'comment_removed'] as const;
export type KnownNotifyType = (typeof KNOWN_NOTIFY_TYPES)[number];

/** The payload, normalized: what a card can show, each field null when absent or of the wrong kind. */
export interface NotifyPayload {
  /** Ups received (with the boost multiplier): a positive integer up to 1000. */
  upCount: number | null;
  /** A review's text, cut to CONTENT_MAX characters. Not escaped: that is the renderer's job. */
  content: string | null;
  /** A review's rating, 1 to 5. */
  rating: number | null;
}

export interface NotifyEvent {
  /** /^[a-z_]{1,64}$/; one of KNOWN_NOTIFY_TYPES or a type added later. */
  type: string;
  /** The resource (bot or server) the event is about: a Discord ID. */
  affected: string;
  /** The user who triggered it: a Discord ID. */
  user: string;
  /** Unix ms, between the Discord epoch and now + 10 minutes. */
  happened: number;
  payload: NotifyPayload;
}

export type NotifyFrame =
  | { kind: 'hello'; id: string }
  | { kind: 'pong' }
  | { kind: 'notify'; event: NotifyEvent }
  | { kind: 'error'; code: number | null; message: string | null }
  | { kind: 'ignored'; reason: 'unknown-event' }
  | { kind: 'invalid'; reason: string };

export type NotifyWebhookResult =
  | { kind: 'notify'; event: NotifyEvent }
  | { kind: 'invalid'; reason: string };

export const DISCORD_EPOCH_MS = 1_420_070_400_000;
/** How far ahead of our clock `happened` may be (the directory's clock may run ahead of ours). */
export const HAPPENED_SKEW_MS = 10 * 60_000;
export const CONTENT_MAX = 4_000;
export const UP_COUNT_MAX = 1_000;
export const ERROR_MESSAGE_MAX = 200;
/** A connection id is only logged: cut to this. */
export const HELLO_ID_MAX = 128;
/** Text longer than this is refused before it is parsed (the client's frame limit is far lower). */
export const FRAME_TEXT_MAX = 4 * 1024 * 1024;

const NOTIFY_TYPE_PATTERN = /^[a-z_]{1,64}$/;

const snowflake = z.string().regex(SNOWFLAKE_PATTERN);

/** Cut to `max` UTF-16 units without leaving half a surrogate pair at the end. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

const upCount = z.number().int().min(1).max(UP_COUNT_MAX);
const rating = z.number().int().min(1).max(5);

/** Anything (null, an array, a string, an object with odd fields) becomes a normalized payload. */
function toPayload(value: unknown): NotifyPayload {
  const out: NotifyPayload = { upCount: null, content: null, rating: null };
  if (!isPlainObject(value)) return out;
  const u = own(value, 'upCount');
  const c = own(value, 'content');
  const r = own(value, 'rating');
  const up = upCount.safeParse(u);
  out.upCount = up.success ? up.data : null;
  out.content = typeof c === 'string' ? cut(c, CONTENT_MAX) : null;
  const rated = rating.safeParse(r);
  out.rating = rated.success ? rated.data : null;
  return out;
}

/** The fields that identify an event; `payload` is read by toPayload, whatever it is. */
const eventFields = z.object({
  type: z.string().regex(NOTIFY_TYPE_PATTERN),
  user: snowflake,
  happened: z.number().int().min(DISCORD_EPOCH_MS),
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property only: `__proto__`, `constructor` and the prototype's keys never count. */
function own(value: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(value, key) ? value[key] : undefined;
}

function describe(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `bad ${first.path.map(String).join('.') || 'value'}` : 'bad value';
}

function toEvent(
  data: Record<string, unknown>,
  resourceKey: 'affected' | 'id',
  now: number,
): { event: NotifyEvent } | { reason: string } {
  const fields = eventFields.safeParse({
    type: own(data, 'type'),
    user: own(data, 'user'),
    happened: own(data, 'happened'),
  });
  if (!fields.success) return { reason: describe(fields.error) };
  const affected = snowflake.safeParse(own(data, resourceKey));
  if (!affected.success) return { reason: `bad ${resourceKey}` };
  if (fields.data.happened > now + HAPPENED_SKEW_MS) return { reason: 'happened in the future' };
  return {
    event: {
      type: fields.data.type,
      affected: affected.data,
      user: fields.data.user,
      happened: fields.data.happened,
      payload: toPayload(own(data, 'payload')),
    },
  };
}

/** One WebSocket frame's text, checked. Never throws. */
export function parseNotifyFrame(text: string, now: number): NotifyFrame {
  try {
    if (typeof text !== 'string') return { kind: 'invalid', reason: 'not text' };
    if (text.length > FRAME_TEXT_MAX) return { kind: 'invalid', reason: 'too large' };
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return { kind: 'invalid', reason: 'not JSON' };
    }
    if (!isPlainObject(frame)) return { kind: 'invalid', reason: 'not an object' };
    const event = own(frame, 'event');
    if (typeof event !== 'string') return { kind: 'invalid', reason: 'no event' };
    const data = own(frame, 'data');
    switch (event) {
      case 'hello': {
        const id = isPlainObject(data) ? own(data, 'id') : undefined;
        if (typeof id !== 'string' || id.length === 0) return { kind: 'invalid', reason: 'bad hello' };
        return { kind: 'hello', id: cut(id, HELLO_ID_MAX) };
      }
      case 'pong':
        return { kind: 'pong' };
      case 'notify': {
        if (!isPlainObject(data)) return { kind: 'invalid', reason: 'bad notify' };
        const result = toEvent(data, 'affected', now);
        return 'event' in result
          ? { kind: 'notify', event: result.event }
          : { kind: 'invalid', reason: `notify: ${result.reason}` };
      }
      case 'error': {
        const code = isPlainObject(data) ? own(data, 'code') : undefined;
        const message = isPlainObject(data) ? own(data, 'message') : undefined;
        return {
          kind: 'error',
          code: typeof code === 'number' && Number.isSafeInteger(code) ? code : null,
          message: typeof message === 'string' ? cut(message, ERROR_MESSAGE_MAX) : null,
        };
      }
      default:
        return { kind: 'ignored', reason: 'unknown-event' };
    }
  } catch {
    // Nothing above should throw; a frame must never break the connection's loop if it does.
    return { kind: 'invalid', reason: 'unreadable' };
  }
}

/**
 * The HTTPS webhook's body (`{type, payload, id, user, happened, webhookSettings}`), already parsed
 * from JSON. `id` becomes `affected`; `webhookSettings` and every other field are left behind.
 */
export function parseNotifyWebhook(body: unknown, now: number): NotifyWebhookResult {
  try {
    if (!isPlainObject(body)) return { kind: 'invalid', reason: 'not an object' };
    const result = toEvent(body, 'id', now);
    return 'event' in result
      ? { kind: 'notify', event: result.event }
      : { kind: 'invalid', reason: result.reason };
  } catch {
    return { kind: 'invalid', reason: 'unreadable' };
  }
}

/**
 * Whether a webhook body has v3's shape (`happened`, and `payload` or `id`, and no `data`), so a
 * receiver can tell it from v2's `{type, data: {user, at, ...}}`. Says nothing of its validity.
 */
export function looksLikeNotifyWebhook(body: unknown): boolean {
  if (!isPlainObject(body)) return false;
  return (
    Object.hasOwn(body, 'happened') &&
    (Object.hasOwn(body, 'payload') || Object.hasOwn(body, 'id')) &&
    !Object.hasOwn(body, 'data')
  );
}

/** What identifies an event across the WebSocket, the webhook and replays. */
export function notifyEventKey(e: NotifyEvent): string {
  return `${e.type}:${e.affected}:${e.user}:${e.happened}`;
}

export function isKnownNotifyType(type: string): type is KnownNotifyType {
  return (KNOWN_NOTIFY_TYPES as readonly string[]).includes(type);
}

/**
 * How one variable of the environment is read (env.ts puts them together in SCHEMA): unset when
 * empty, trimmed, and parsed by a small parser that says in plain words what it expected. The
 * words are a key of the operator catalogs (src/i18n/operator/, under `config.`) and its values:
 * loadConfig says them in the operator's language.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import type { OperatorParams } from '../i18n/operator.js';
import { MAX_TIMER_MS } from '../time/range.js';
import { describeUrl } from './database-url.js';

/**
 * Records the problem: a key under `config.` in the operator catalogs and its values (a text that
 * is no key, such as another module's message, is shown as it is); a parser returns what it
 * returns and goes no further.
 */
export type Fail = (key: string, params?: OperatorParams) => never;

/**
 * One variable. An empty value, or one of only whitespace, is unset: `HTTP_PORT=` in a `.env` or
 * a `docker run --env-file` must not replace a default with nothing. Anything else is trimmed and
 * handed to `parse`, which returns the value or `fail(message)`.
 */
export function variable<T, F>(fallback: F, parse: (value: string, fail: Fail) => T) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T | F => {
      const value = raw?.trim();
      if (value === undefined || value === '') return fallback;
      return parse(value, (key, params) => {
        ctx.addIssue({ code: 'custom', message: key, ...(params === undefined ? {} : { params }) });
        return z.NEVER;
      });
    });
}

export const optionalText = variable(undefined, (value) => value);

/** `unit: 'ms'` says the number is of milliseconds. */
export function integer(min: number, max: number, fallback: number, unit?: 'ms') {
  return variable(fallback, (value, fail) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      return fail(unit === 'ms' ? 'wholeNumberMs' : 'wholeNumber', { min, max });
    }
    return n;
  });
}

export function rate<F extends { max: number; windowMs: number } | undefined>(fallback: F) {
  return variable(fallback, (value, fail) => {
    const match = /^(\d+)\/(\d+)$/.exec(value);
    const max = Number(match?.[1]);
    const windowMs = Number(match?.[2]);
    if (!match || max < 1 || windowMs < 1) return fail('rate');
    return { max, windowMs };
  });
}

function parseHttpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** An http(s) address without its trailing slashes. */
export function httpUrl(value: string, fail: Fail): string {
  return parseHttpUrl(value) ? value.replace(/\/+$/, '') : fail('httpUrl');
}

/** The directory's notifications: a ws(s) URL, or `off`. */
export function notifyUrl(value: string, fail: Fail): string {
  if (value.toLowerCase() === 'off') return 'off';
  try {
    const url = new URL(value);
    if (url.protocol === 'wss:' || url.protocol === 'ws:') return value;
  } catch {
    // said below
  }
  return fail('notifyUrl');
}

/**
 * The address of @discordjs/proxy (src/app/rest-proxy.ts) as a REST base: the proxy takes
 * Discord's paths below `/api` (it strips `/api` and the version, then puts them back upstream), so
 * `/api` is added when the address does not end in it: `http://discord-proxy:8080` and
 * `http://discord-proxy:8080/api` are the same proxy.
 */
export function restProxyUrl() {
  return variable(undefined, (value, fail) => {
    const url = httpUrl(value, fail);
    return /\/api$/i.test(url) ? url : `${url}/api`;
  });
}

/**
 * The directory's address. The client puts the version in front of every path itself, so an
 * address that ends in one (as the directory's documentation writes it) would ask for /v2/v2/...
 * and meet 404s that read as "not found".
 */
export function directoryUrl(fallback: string) {
  return variable(fallback, (value, fail) => {
    const version = /\/(v\d+)\/*$/i.exec(parseHttpUrl(value)?.pathname ?? '')?.[1];
    if (version === undefined) return httpUrl(value, fail);
    return fail('directoryUrlVersion', { version });
  });
}

/**
 * A token is one word of visible ASCII, as Discord's and the directory's are. A line break, a space
 * or another character inside is a copy-paste slip that would otherwise surface only at the first
 * request, as a network error; the message names the slip, never the value.
 */
export function token() {
  return variable(undefined, (value, fail) => {
    if (/^[\x21-\x7e]+$/.test(value)) return value;
    if (/[\r\n]/.test(value)) return fail('tokenLineBreak');
    if (/\s/.test(value)) return fail('tokenSpace');
    return fail('tokenControl');
  });
}

/**
 * A PostgreSQL URL. The message about a wrong one names its scheme at most: the rest may hold a
 * password.
 */
export function databaseUrl() {
  return variable(undefined, (value, fail) => {
    if (describeUrl(value) !== undefined) return value;
    // Only a scheme followed by //: what precedes the first colon may otherwise be a password.
    const scheme = /^([a-z][a-z\d+.-]*):\/\//i.exec(value)?.[1];
    return scheme === undefined ? fail('databaseUrl') : fail('databaseUrlScheme', { scheme });
  });
}

export function snowflake() {
  return variable(undefined, (value, fail) => (/^\d{17,20}$/.test(value) ? value : fail('snowflake')));
}

/** `30m`, `900s`, `1h`, `1500ms`, or a bare number of milliseconds. */
export function parseDuration(value: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?$/.exec(value.trim());
  if (!match) return undefined;
  const n = Number(match[1]);
  const unit = match[2] ?? 'ms';
  const factor = unit === 'h' ? 3_600_000 : unit === 'm' || unit === 'min' ? 60_000 : unit === 's' ? 1000 : 1;
  const ms = Math.round(n * factor);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
}

export function duration(fallback: number) {
  return variable(fallback, (value, fail) => {
    const ms = parseDuration(value);
    if (ms === undefined) return fail('duration');
    if (ms > MAX_TIMER_MS) return fail('durationTooLong', { valueMs: ms });
    return ms;
  });
}

export function flag() {
  return variable(false, (value, fail) => {
    const word = value.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(word)) return true;
    if (['0', 'false', 'no', 'off'].includes(word)) return false;
    return fail('flag');
  });
}

export function optionalPort() {
  return variable(undefined, (value, fail) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n > 65_535) return fail('port');
    return n;
  });
}

const HOST_NAME = /^(?=.{1,253}$)[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?(?:\.[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?)*$/i;

/** Where to listen: an IP address or a host name; a port, a scheme or brackets in it are slips. */
export function host(fallback: string) {
  return variable(fallback, (value, fail) =>
    isIP(value) !== 0 || HOST_NAME.test(value) ? value : fail('host'),
  );
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) {
  return variable(fallback, (value, fail): T[number] =>
    (values as readonly string[]).includes(value)
      ? (value as T[number])
      : fail('oneOf', { values: values.join(', ') }),
  );
}

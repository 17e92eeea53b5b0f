/**
 * The one place that reads the environment. Every variable the project knows is in SCHEMA;
 * a bad configuration is reported all at once, in plain words, without echoing secrets.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { MAX_TIMER_MS } from '../time/range.js';
import { describeUrl, passwordsOf } from './database-url.js';

export type Environment = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Variables whose values are never shown, not even in an error about them. */
export const SECRET_VARIABLES = new Set(['DIRECTORY_TOKEN', 'DISCORD_TOKEN', 'DATABASE_URL']);

/** The directory asks for at least this long between stats posts. */
const MIN_STATS_INTERVAL_MS = 15 * 60_000;
/** POST /stats takes one request per 2 s; anything shorter can only earn 429s. */
const MIN_SHORT_STATS_INTERVAL_MS = 2_000;

/** Records the problem; a parser returns what it returns and goes no further. */
type Fail = (message: string) => never;

/**
 * One variable. An empty value, or one of only whitespace, is unset: `HTTP_PORT=` in a `.env` or
 * a `docker run --env-file` must not replace a default with nothing. Anything else is trimmed and
 * handed to `parse`, which returns the value or `fail(message)`.
 */
function variable<T, F>(fallback: F, parse: (value: string, fail: Fail) => T) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T | F => {
      const value = raw?.trim();
      if (value === undefined || value === '') return fallback;
      return parse(value, (message) => {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      });
    });
}

const optionalText = variable(undefined, (value) => value);

function integer(min: number, max: number, fallback: number, unit = '') {
  return variable(fallback, (value, fail) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      return fail(`expected a whole number from ${min} to ${max}${unit}`);
    }
    return n;
  });
}

function rate(fallback: { max: number; windowMs: number }) {
  return variable(fallback, (value, fail) => {
    const match = /^(\d+)\/(\d+)$/.exec(value);
    const max = Number(match?.[1]);
    const windowMs = Number(match?.[2]);
    if (!match || max < 1 || windowMs < 1) return fail('expected REQUESTS/MILLISECONDS, for example 5/5000');
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
function httpUrl(value: string, fail: Fail): string {
  return parseHttpUrl(value) ? value.replace(/\/+$/, '') : fail('expected an http(s) URL');
}

/**
 * The directory's address. The client puts the version in front of every path itself, so an
 * address that ends in one (as the directory's documentation writes it) would ask for /v2/v2/...
 * and meet 404s that read as "not found".
 */
function directoryUrl(fallback: string) {
  return variable(fallback, (value, fail) => {
    const version = /\/(v\d+)\/*$/i.exec(parseHttpUrl(value)?.pathname ?? '')?.[1];
    if (version === undefined) return httpUrl(value, fail);
    return fail(
      `expected the address without the version: remove the /${version} at its end ` +
        '(DIRECTORY_API_VERSION chooses the version)',
    );
  });
}

/**
 * A token is one word of visible ASCII, as Discord's and the directory's are. A line break, a space
 * or another character inside is a copy-paste slip that would otherwise surface only at the first
 * request, as a network error; the message names the slip, never the value.
 */
function token() {
  return variable(undefined, (value, fail) => {
    if (/^[\x21-\x7e]+$/.test(value)) return value;
    let slip = 'a control or non-ASCII character';
    if (/[\r\n]/.test(value)) slip = 'a line break';
    else if (/\s/.test(value)) slip = 'a space';
    return fail(`expected the token alone, as one word: it has ${slip} inside`);
  });
}

/**
 * A PostgreSQL URL. The message about a wrong one names its scheme at most: the rest may hold a
 * password.
 */
function databaseUrl() {
  return variable(undefined, (value, fail) => {
    if (describeUrl(value) !== undefined) return value;
    // Only a scheme followed by //: what precedes the first colon may otherwise be a password.
    const scheme = /^([a-z][a-z\d+.-]*):\/\//i.exec(value)?.[1];
    return fail(
      'expected a PostgreSQL URL, postgres://user:password@host:port/database (or postgresql://)' +
        (scheme === undefined ? '' : `; this one starts with ${scheme}:`),
    );
  });
}

function snowflake() {
  return variable(undefined, (value, fail) =>
    /^\d{17,20}$/.test(value) ? value : fail('expected a Discord ID (17 to 20 digits)'),
  );
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

function formatMs(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1_000 && ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

function duration(fallback: number) {
  return variable(fallback, (value, fail) => {
    const ms = parseDuration(value);
    if (ms === undefined) return fail('expected a duration such as 30m, 900s or 1h');
    if (ms > MAX_TIMER_MS) return fail(`${formatMs(ms)} is longer than a timer can wait (about 24 days)`);
    return ms;
  });
}

function flag() {
  return variable(false, (value, fail) => {
    const word = value.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(word)) return true;
    if (['0', 'false', 'no', 'off'].includes(word)) return false;
    return fail('expected true or false');
  });
}

function shardCount() {
  return variable('auto' as const, (value, fail): number | 'auto' => {
    if (value === 'auto') return 'auto';
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 10_000) {
      return fail('expected auto or a whole number of shards from 1');
    }
    return n;
  });
}

/** SHARD_IDS: `0-3`, `0,1,2,3`, or both (`0-1,4`); ascending, no repeats. */
function shardIds() {
  return variable(undefined, (value, fail): number[] => {
    const ids: number[] = [];
    for (const part of value.split(',')) {
      const match = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/.exec(part);
      if (!match) return fail('expected shard ids such as 0-3 or 0,1,2,3');
      const from = Number(match[1]);
      const to = match[2] === undefined ? from : Number(match[2]);
      if (to < from) return fail(`the range ${from}-${to} runs backwards`);
      for (let id = from; id <= to; id++) ids.push(id);
    }
    const sorted = [...new Set(ids)].sort((a, b) => a - b);
    if (sorted.length !== ids.length) return fail('a shard id is named twice');
    if (sorted.length > 1_000) return fail('more than 1000 shards on one host');
    return sorted;
  });
}

/** HOST_ID: how this host is named in the store and the logs; letters, digits, . _ - : */
const hostId = variable(undefined, (value, fail) =>
  /^[A-Za-z0-9._:-]{1,100}$/.test(value)
    ? value
    : fail('expected 1 to 100 letters, digits, ".", "_", "-" or ":"'),
);

/**
 * HOST_GONE_AFTER: how long a host may write none of its shards before the others answer its ups
 * in flight and send its servers' reminders. At least 10 s: two of a live host's writes (every 5 s).
 */
function hostGoneAfter() {
  return variable(60_000, (value, fail) => {
    const ms = parseDuration(value);
    if (ms === undefined) return fail('expected a duration such as 60s or 2m');
    if (ms < 10_000) return fail('at least 10s: a live host writes its shards every 5 s');
    if (ms > 600_000)
      return fail(
        "at most 10m: a gone host's ups must be answered while their interaction tokens (15 min) live",
      );
    return ms;
  });
}

function optionalPort() {
  return variable(undefined, (value, fail) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n > 65_535) return fail('expected a port from 0 to 65535');
    return n;
  });
}

const HOST_NAME = /^(?=.{1,253}$)[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?(?:\.[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?)*$/i;

/** Where to listen: an IP address or a host name; a port, a scheme or brackets in it are slips. */
function host(fallback: string) {
  return variable(fallback, (value, fail) =>
    isIP(value) !== 0 || HOST_NAME.test(value)
      ? value
      : fail('expected an IP address (such as 0.0.0.0, 127.0.0.1 or ::) or a host name, without a port'),
  );
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) {
  return variable(fallback, (value, fail): T[number] =>
    (values as readonly string[]).includes(value)
      ? (value as T[number])
      : fail(`expected one of ${values.join(', ')}`),
  );
}

/** STATS_INTERVAL against the directory's rule and STATS_ALLOW_SHORT_INTERVAL; undefined when it is fine. */
function intervalProblem(ms: number, allowShort: boolean): string | undefined {
  if (ms < MIN_STATS_INTERVAL_MS && !allowShort) {
    return (
      `${formatMs(ms)} is too often: the directory asks for at least 15 min between stats posts and ` +
      'may restrict a token that posts more often; use 15m or more ' +
      '(STATS_ALLOW_SHORT_INTERVAL=true allows shorter intervals for tests against a local directory)'
    );
  }
  if (ms < MIN_SHORT_STATS_INTERVAL_MS) {
    return (
      `${formatMs(ms)} is too short even with STATS_ALLOW_SHORT_INTERVAL: it must be at least 2 s, ` +
      'as POST /stats takes one request per 2 s'
    );
  }
  return undefined;
}

const INTERVAL_VARIABLES: ReadonlySet<PropertyKey> = new Set([
  'STATS_INTERVAL',
  'STATS_ALLOW_SHORT_INTERVAL',
]);

export const SCHEMA = z
  .object({
    DIRECTORY_API_URL: directoryUrl('https://api.boticord.top'),
    DIRECTORY_API_VERSION: oneOf(['v1', 'v2'], 'v2'),
    DIRECTORY_TOKEN: token(),
    DIRECTORY_TOKEN_KIND: oneOf(['Bot', 'PrivateBot', 'Profile'], 'Bot'),
    DIRECTORY_TIMEOUT_MS: integer(100, 120_000, 10_000, ' (milliseconds)'),
    DIRECTORY_MAX_RETRIES: integer(0, 10, 2),
    DIRECTORY_RATE_LIMIT: rate({ max: 5, windowMs: 5_000 }),
    DIRECTORY_ROUTE_RATE_LIMIT: rate({ max: 1, windowMs: 2_000 }),
    DIRECTORY_RATE_LIMIT_MARGIN_MS: integer(0, 10_000, 25, ' (milliseconds)'),
    LOG_LEVEL: oneOf(LOG_LEVELS, 'info'),
    DISCORD_TOKEN: token(),
    DISCORD_APPLICATION_ID: snowflake(),
    DISCORD_API_URL: variable(undefined, httpUrl),
    DEV_GUILD_ID: snowflake(),
    STATS_INTERVAL: duration(30 * 60_000),
    STATS_ALLOW_SHORT_INTERVAL: flag(),
    SHARD_COUNT: shardCount(),
    SHARD_IDS: shardIds(),
    HOST_INDEX: variable(undefined, (value, fail) =>
      /^\d{1,4}$/.test(value) ? Number(value) : fail('expected a whole number from 0 (a pod ordinal)'),
    ),
    SHARDS_PER_HOST: variable(undefined, (value, fail) =>
      /^\d{1,4}$/.test(value) && Number(value) >= 1 ? Number(value) : fail('expected a whole number from 1'),
    ),
    HOST_ID: hostId,
    HOST_GONE_AFTER: hostGoneAfter(),
    HTTP_PORT: optionalPort(),
    HTTP_HOST: host('0.0.0.0'),
    WEBHOOK_PORT: optionalPort(),
    WEBHOOK_HOST: host('0.0.0.0'),
    PUBLIC_URL: variable(undefined, httpUrl),
    WEBHOOK_RATE_LIMIT: rate({ max: 30, windowMs: 10_000 }),
    STATS_FIRST_DELAY: duration(30_000),
    DATA_DIR: optionalText,
    DATABASE_URL: databaseUrl(),
    SHUTDOWN_TIMEOUT_MS: integer(500, 9_000, 6_000, ' (milliseconds)'),
    REMINDER_CLAIM_MS: integer(1_000, 600_000, 30_000, ' (milliseconds)'),
    // Set by discord.js's ShardingManager in the processes it spawns; not for operators.
    SHARDING_MANAGER: flag(),
    SHARDS: optionalText,
  })
  .superRefine(
    (e, ctx) => {
      const problem = intervalProblem(e.STATS_INTERVAL, e.STATS_ALLOW_SHORT_INTERVAL);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['STATS_INTERVAL'], message: problem });
    },
    // Reported with every other bad variable, unless one of its own two is bad already.
    { when: (payload) => !payload.issues.some((issue) => INTERVAL_VARIABLES.has(issue.path?.[0] ?? '')) },
  )
  .superRefine(
    (e, ctx) => {
      for (const [path, message] of hostProblems(e)) ctx.addIssue({ code: 'custom', path: [path], message });
    },
    { when: (payload) => !payload.issues.some((issue) => HOST_VARIABLES.has(issue.path?.[0] ?? '')) },
  );

/**
 * This host's shards: SHARD_IDS, or HOST_INDEX × SHARDS_PER_HOST (a StatefulSet's pod ordinal);
 * either needs a fixed SHARD_COUNT that every id is below.
 */
function hostShards(e: {
  SHARD_IDS: number[] | undefined;
  HOST_INDEX: number | undefined;
  SHARDS_PER_HOST: number | undefined;
}): number[] | undefined {
  if (e.SHARD_IDS !== undefined) return e.SHARD_IDS;
  if (e.HOST_INDEX === undefined || e.SHARDS_PER_HOST === undefined) return undefined;
  const first = e.HOST_INDEX * e.SHARDS_PER_HOST;
  return Array.from({ length: e.SHARDS_PER_HOST }, (_, i) => first + i);
}

const HOST_VARIABLES: ReadonlySet<PropertyKey> = new Set([
  'SHARD_COUNT',
  'SHARD_IDS',
  'HOST_INDEX',
  'SHARDS_PER_HOST',
  'DATABASE_URL',
  'SHARDING_MANAGER',
]);

function hostProblems(e: {
  SHARD_COUNT: number | 'auto';
  SHARD_IDS: number[] | undefined;
  HOST_INDEX: number | undefined;
  SHARDS_PER_HOST: number | undefined;
  DATABASE_URL: string | undefined;
  SHARDING_MANAGER: boolean;
}): Array<[string, string]> {
  const problems: Array<[string, string]> = [];
  if (e.SHARD_IDS !== undefined && (e.HOST_INDEX !== undefined || e.SHARDS_PER_HOST !== undefined)) {
    problems.push(['SHARD_IDS', 'set either SHARD_IDS or HOST_INDEX with SHARDS_PER_HOST, not both']);
    return problems;
  }
  if ((e.HOST_INDEX === undefined) !== (e.SHARDS_PER_HOST === undefined)) {
    const missing = e.HOST_INDEX === undefined ? 'HOST_INDEX' : 'SHARDS_PER_HOST';
    problems.push([
      missing,
      'HOST_INDEX and SHARDS_PER_HOST go together (this host runs shards index × per host onwards)',
    ]);
    return problems;
  }
  const ids = hostShards(e);
  if (ids === undefined) return problems;
  const name = e.SHARD_IDS !== undefined ? 'SHARD_IDS' : 'HOST_INDEX';
  if (e.SHARD_COUNT === 'auto') {
    problems.push([
      'SHARD_COUNT',
      `a fixed number of shards is needed with ${name}: every host must count the same`,
    ]);
  } else {
    const beyond = ids.filter((id) => id >= (e.SHARD_COUNT as number));
    if (beyond.length > 0) {
      problems.push([
        name,
        `shard ${beyond[0]} does not exist: ids go from 0 to SHARD_COUNT - 1 (${e.SHARD_COUNT - 1})`,
      ]);
    }
  }
  if (e.SHARDING_MANAGER)
    problems.push([name, 'start:sharded spawns every shard itself; run npm start on each host']);
  if (e.DATABASE_URL === undefined) {
    problems.push([
      'DATABASE_URL',
      `hosts running shard ranges (${name}) share PostgreSQL; set DATABASE_URL`,
    ]);
  }
  return problems;
}

export interface Config {
  directory: {
    baseUrl: string;
    version: 'v1' | 'v2';
    token: string | undefined;
    tokenKind: 'Bot' | 'PrivateBot' | 'Profile';
    timeoutMs: number;
    maxRetries: number;
    rateLimits: {
      global: { max: number; windowMs: number };
      routes: { max: number; windowMs: number };
      marginMs: number;
    };
  };
  discord: {
    token: string | undefined;
    applicationId: string | undefined;
    /** REST base including /api, e.g. http://127.0.0.1:8080/api; undefined: Discord's own. */
    apiUrl: string | undefined;
    devGuildId: string | undefined;
  };
  stats: {
    intervalMs: number;
    /** From full readiness to the first post. */
    firstDelayMs: number;
    /** The documented override for tests and local work: intervals under 15 minutes. */
    allowShortInterval: boolean;
  };
  sharding: {
    /** SHARD_COUNT: 'auto' asks Discord for the recommended count. */
    shardCount: number | 'auto';
    /** This process was spawned by the ShardingManager (start:sharded). */
    isChild: boolean;
    /** In such a process, the shards it runs (from SHARDS). */
    childShards: number[];
    /**
     * One host of several: the shards it runs (SHARD_IDS, or HOST_INDEX × SHARDS_PER_HOST) of a
     * fixed shard count; undefined when this process runs every shard (or is one of start:sharded).
     */
    hostShards: number[] | undefined;
    /** How this host is named in the store and the logs: HOST_ID, else the machine's host name. */
    hostId: string;
    /** HOST_GONE_AFTER: a host silent this long is gone; the others take its ups and reminders over. */
    hostGoneAfterMs: number;
  };
  /** Operations endpoint (/healthz, /readyz, /metrics); off when undefined. */
  httpPort: number | undefined;
  /** Address the operations endpoint listens on. */
  httpHost: string;
  /** The directory's webhooks (features/webhooks/receiver.ts). */
  webhook: {
    /** WEBHOOK_PORT: where the receiver listens; undefined: no receiver. */
    port: number | undefined;
    host: string;
    /** PUBLIC_URL: the address the directory reaches the receiver at (to show the whole URL). */
    publicUrl: string | undefined;
    /** Deliveries per window, per source address and server. */
    rateLimit: { max: number; windowMs: number };
  };
  shutdownTimeoutMs: number;
  /** How long a process holds a due reminder it claimed before another may take it over. */
  reminderClaimMs: number;
  /** Where the SQLite store is kept, when there is no databaseUrl. */
  dataDir: string;
  /** The PostgreSQL store (secret: it may hold a password); undefined: SQLite in dataDir. */
  databaseUrl: string | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function shown(name: string, env: Environment): string {
  const value = env[name];
  if (value === undefined) return '';
  if (SECRET_VARIABLES.has(name)) return ' (value hidden)';
  const cut = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return ` (got ${JSON.stringify(cut)})`;
}

/** SHARDS as discord.js's ShardingManager writes it: a JSON array of shard IDs. */
function parseShardList(value: string | undefined): number[] {
  if (value === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((n): n is number => Number.isInteger(n) && n >= 0) : [];
  } catch {
    return [];
  }
}

/** Parses the environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: Environment): Config {
  const result = SCHEMA.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? '(environment)');
      return `${name}: ${issue.message}${shown(name, env)}`;
    });
    throw new ConfigError(problems);
  }
  const e = result.data;
  return {
    directory: {
      baseUrl: e.DIRECTORY_API_URL,
      version: e.DIRECTORY_API_VERSION,
      token: e.DIRECTORY_TOKEN,
      tokenKind: e.DIRECTORY_TOKEN_KIND,
      timeoutMs: e.DIRECTORY_TIMEOUT_MS,
      maxRetries: e.DIRECTORY_MAX_RETRIES,
      rateLimits: {
        global: e.DIRECTORY_RATE_LIMIT,
        routes: e.DIRECTORY_ROUTE_RATE_LIMIT,
        marginMs: e.DIRECTORY_RATE_LIMIT_MARGIN_MS,
      },
    },
    discord: {
      token: e.DISCORD_TOKEN,
      applicationId: e.DISCORD_APPLICATION_ID,
      apiUrl: e.DISCORD_API_URL,
      devGuildId: e.DEV_GUILD_ID,
    },
    stats: {
      intervalMs: e.STATS_INTERVAL,
      firstDelayMs: e.STATS_FIRST_DELAY,
      allowShortInterval: e.STATS_ALLOW_SHORT_INTERVAL,
    },
    sharding: {
      shardCount: e.SHARD_COUNT,
      isChild: e.SHARDING_MANAGER && e.SHARDS !== undefined,
      childShards: parseShardList(e.SHARDS),
      hostShards: hostShards(e),
      hostId: e.HOST_ID ?? hostname(),
      hostGoneAfterMs: e.HOST_GONE_AFTER,
    },
    httpPort: e.HTTP_PORT,
    httpHost: e.HTTP_HOST,
    webhook: {
      port: e.WEBHOOK_PORT,
      host: e.WEBHOOK_HOST,
      publicUrl: e.PUBLIC_URL,
      rateLimit: e.WEBHOOK_RATE_LIMIT,
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    reminderClaimMs: e.REMINDER_CLAIM_MS,
    dataDir: e.DATA_DIR ?? 'data',
    databaseUrl: e.DATABASE_URL,
    logLevel: e.LOG_LEVEL,
  };
}

/** Holds the Docker image's defaults (see the Dockerfile); a checkout has none. */
export const DEFAULTS_FILE = '.env.defaults';

function readEnvFile(path: string): Environment {
  return existsSync(path) ? parseEnv(readFileSync(path, 'utf8')) : {};
}

/**
 * The environment for loadConfig, in three layers, the first that sets a variable wins: the process
 * environment, a `.env` file in the working directory, and a `.env.defaults` file there. A variable
 * that is empty in one layer is unset there and comes from the next: `docker run --env-file .env`
 * with `HTTP_PORT=` keeps the image's port. The only read of process.env in the project.
 */
export function readEnvironment(
  cwd: string = process.cwd(),
  environment: Environment = process.env,
): Environment {
  const env: Environment = {};
  for (const layer of [environment, readEnvFile(`${cwd}/.env`), readEnvFile(`${cwd}/${DEFAULTS_FILE}`)]) {
    for (const [key, value] of Object.entries(layer)) {
      if (env[key] === undefined && value !== undefined && value.trim() !== '') env[key] = value;
    }
  }
  return env;
}

/** Every secret value in a configuration, for log scrubbing. */
export function secretsOf(config: Config): string[] {
  const database = config.databaseUrl === undefined ? [] : passwordsOf(config.databaseUrl);
  return [config.directory.token, config.discord.token, ...database].filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
}

/**
 * The one place that reads the environment. Every variable the project knows is in SCHEMA;
 * a bad configuration is reported all at once, in plain words, without echoing secrets. How one
 * variable is read is variables.ts's; the sharding variables and their rules are sharding.ts's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { parseTrustProxy, type TrustProxy } from '../http/client-address.js';
import { type OperatorMessage, operatorLanguage } from '../i18n/operator.js';
import { passwordsOf } from './database-url.js';
import {
  DEFAULT_LOOKUP_CACHE,
  type DirectoryConfig,
  directoryConfig,
  directoryProblems,
  TOKEN_KINDS,
  type TokenKind,
} from './directory.js';
import { ConfigError, type ConfigProblem, messageOf } from './errors.js';
import {
  HOST_VARIABLES,
  hostGoneAfter,
  hostId,
  hostProblems,
  hostShards,
  parseShardList,
  shardCount,
  shardIds,
} from './sharding.js';
import { TRACING_VARIABLES, type TracingConfig, tracingConfig } from './tracing.js';
import {
  databaseUrl,
  directoryUrl,
  duration,
  flag,
  host,
  httpUrl,
  integer,
  notifyUrl,
  oneOf,
  optionalPort,
  optionalText,
  rate,
  restProxyUrl,
  snowflake,
  token,
  variable,
} from './variables.js';

export { ConfigError, type ConfigProblem } from './errors.js';
export { parseDuration } from './variables.js';

export type Environment = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Variables whose values are never shown, not even in an error about them. */
export const SECRET_VARIABLES = new Set([
  'DIRECTORY_TOKEN',
  'DIRECTORY_UP_TOKEN',
  'DISCORD_TOKEN',
  'DATABASE_URL',
]);

/** The directory asks for at least this long between stats posts. */
const MIN_STATS_INTERVAL_MS = 15 * 60_000;
/** POST /stats takes one request per 2 s; anything shorter can only earn 429s. */
const MIN_SHORT_STATS_INTERVAL_MS = 2_000;

/** STATS_INTERVAL against the directory's rule and STATS_ALLOW_SHORT_INTERVAL; undefined when it is fine. */
function intervalProblem(ms: number, allowShort: boolean): OperatorMessage | undefined {
  if (ms < MIN_STATS_INTERVAL_MS && !allowShort) return { key: 'statsTooOften', params: { valueMs: ms } };
  if (ms < MIN_SHORT_STATS_INTERVAL_MS) return { key: 'statsTooShort', params: { valueMs: ms } };
  return undefined;
}

/** A problem found after the variables are read, as a zod issue: the key as message, its values as params. */
function issue(path: string, { key, params }: OperatorMessage) {
  return { code: 'custom' as const, path: [path], message: key, ...(params === undefined ? {} : { params }) };
}

const INTERVAL_VARIABLES: ReadonlySet<PropertyKey> = new Set([
  'STATS_INTERVAL',
  'STATS_ALLOW_SHORT_INTERVAL',
]);

export const SCHEMA = z
  .object({
    DIRECTORY_API_URL: directoryUrl('https://api.boticord.top'),
    DIRECTORY_API_VERSION: oneOf(['v3', 'v2', 'v1'], 'v3'),
    DIRECTORY_TOKEN: token(),
    // v2 only: unset means Bot there, and is refused with v3 when given (directory.ts).
    DIRECTORY_TOKEN_KIND: variable(undefined, (value, fail) =>
      TOKEN_KINDS.includes(value as TokenKind)
        ? (value as TokenKind)
        : fail('oneOf', { values: TOKEN_KINDS.join(', ') }),
    ),
    DIRECTORY_TIMEOUT_MS: integer(100, 120_000, 10_000, 'ms'),
    DIRECTORY_MAX_RETRIES: integer(0, 10, 2),
    // The defaults are each version's published limits (directory.ts).
    DIRECTORY_RATE_LIMIT: rate(undefined),
    DIRECTORY_ROUTE_RATE_LIMIT: rate(undefined),
    DIRECTORY_SEARCH_URL: variable(undefined, httpUrl),
    // v3 only: the notifications' WebSocket; `off` turns it off (directory.ts).
    DIRECTORY_NOTIFY_URL: variable(undefined, notifyUrl),
    // v3 only: a v2 key that can still raise servers, for /up (directory.ts).
    DIRECTORY_UP_TOKEN: token(),
    DIRECTORY_UP_TOKEN_KIND: variable(undefined, (value, fail) =>
      TOKEN_KINDS.includes(value as TokenKind)
        ? (value as TokenKind)
        : fail('oneOf', { values: TOKEN_KINDS.join(', ') }),
    ),
    DIRECTORY_CACHE_TTL: duration(DEFAULT_LOOKUP_CACHE.ttlMs),
    DIRECTORY_CACHE_SIZE: integer(0, 1_000_000, DEFAULT_LOOKUP_CACHE.maxEntries),
    DIRECTORY_RATE_LIMIT_MARGIN_MS: integer(0, 10_000, 25, 'ms'),
    LOG_LEVEL: oneOf(LOG_LEVELS, 'info'),
    DISCORD_TOKEN: token(),
    DISCORD_APPLICATION_ID: snowflake(),
    DISCORD_API_URL: variable(undefined, httpUrl),
    DISCORD_REST_PROXY_URL: restProxyUrl(),
    DISCORD_REST_PROXY_PORT: optionalPort(),
    DISCORD_REST_PROXY_HOST: host('127.0.0.1'),
    DEV_GUILD_ID: snowflake(),
    STATS_INTERVAL: duration(30 * 60_000),
    STATS_ALLOW_SHORT_INTERVAL: flag(),
    SHARD_COUNT: shardCount(),
    SHARD_IDS: shardIds(),
    HOST_INDEX: variable(undefined, (value, fail) =>
      /^\d{1,4}$/.test(value) ? Number(value) : fail('hostIndex'),
    ),
    SHARDS_PER_HOST: variable(undefined, (value, fail) =>
      /^\d{1,4}$/.test(value) && Number(value) >= 1 ? Number(value) : fail('shardsPerHost'),
    ),
    HOST_ID: hostId,
    HOST_GONE_AFTER: hostGoneAfter(),
    HTTP_PORT: optionalPort(),
    HTTP_HOST: host('127.0.0.1'),
    WEBHOOK_PORT: optionalPort(),
    WEBHOOK_HOST: host('0.0.0.0'),
    PUBLIC_URL: variable(undefined, httpUrl),
    WEBHOOK_RATE_LIMIT: rate({ max: 30, windowMs: 10_000 }),
    TRUST_PROXY: variable(undefined as TrustProxy, (value, fail) => {
      const trust = parseTrustProxy(value);
      // Its message is said as it is: it is no key of the operator catalogs.
      return typeof trust === 'string' ? fail(trust) : trust;
    }),
    WEBHOOK_SERVER_PENDING: integer(1, 1_000_000, 500),
    WEBHOOK_SERVER_RATE: rate({ max: 60, windowMs: 60_000 }),
    STATS_FIRST_DELAY: duration(30_000),
    DATA_DIR: optionalText,
    // The store's own default (DEFAULT_LOCK_WAIT_MS), kept here too: the configuration loads no store code.
    SQLITE_LOCK_WAIT: duration(30_000),
    DATABASE_URL: databaseUrl(),
    DATABASE_POOL_SIZE: integer(1, 100, 10),
    SHUTDOWN_TIMEOUT_MS: integer(500, 9_000, 6_000, 'ms'),
    IDENTIFY_BUDGET_FLOOR: integer(0, 1_000_000, 20),
    DISCORD_GLOBAL_RATE_LIMIT: integer(1, 100_000, 50),
    REMINDER_CLAIM_MS: integer(1_000, 600_000, 30_000, 'ms'),
    ...TRACING_VARIABLES,
    // Set by discord.js's ShardingManager in the processes it spawns; not for operators.
    SHARDING_MANAGER: flag(),
    SHARDS: optionalText,
  })
  .superRefine(
    (e, ctx) => {
      const problem = intervalProblem(e.STATS_INTERVAL, e.STATS_ALLOW_SHORT_INTERVAL);
      if (problem !== undefined) ctx.addIssue(issue('STATS_INTERVAL', problem));
    },
    // Reported with every other bad variable, unless one of its own two is bad already.
    { when: (payload) => !payload.issues.some((issue) => INTERVAL_VARIABLES.has(issue.path?.[0] ?? '')) },
  )
  .superRefine((e, ctx) => {
    for (const [path, message] of directoryProblems(e)) ctx.addIssue(issue(path, message));
  })
  .superRefine(
    (e, ctx) => {
      for (const [path, message] of hostProblems(e)) ctx.addIssue(issue(path, message));
    },
    { when: (payload) => !payload.issues.some((issue) => HOST_VARIABLES.has(issue.path?.[0] ?? '')) },
  );

export type { TracingConfig };

export interface Config {
  directory: DirectoryConfig;
  discord: {
    token: string | undefined;
    applicationId: string | undefined;
    /**
     * The bot's user ID: DISCORD_APPLICATION_ID, else read from the token (its first part is the
     * bot's ID in base64). v3's statistics route names it.
     */
    botId: string | undefined;
    /**
     * REST base including /api, e.g. http://127.0.0.1:8080/api; undefined: Discord's own. The
     * direct address: the deferrals and the interaction answers always go here, and so does the
     * rest when there is no restProxyUrl; the proxy's upstream.
     */
    apiUrl: string | undefined;
    /**
     * DISCORD_REST_PROXY_URL: the @discordjs/proxy every host shares (one global limit for the
     * token), ending in /api; the bot-token requests go there. Undefined: they go to apiUrl.
     */
    restProxyUrl: string | undefined;
    /**
     * DISCORD_GLOBAL_RATE_LIMIT: Discord's global limit for the bot's token, requests a second (50;
     * Discord raises it for a large bot on request). Kept by the bot alone, or by the REST proxy
     * the hosts share (src/gateway/global-pace.ts).
     */
    globalPerSecond: number;
    devGuildId: string | undefined;
    /**
     * IDENTIFY_BUDGET_FLOOR: the start is refused when identifying this process's shards would
     * leave fewer of Discord's daily identifies than this (src/gateway/identify-budget.ts); 0: only when
     * fewer are left than the shards need.
     */
    identifyFloor: number;
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
  /** The REST proxy's own listener (src/app/rest-proxy.ts): DISCORD_REST_PROXY_PORT and _HOST. */
  restProxy: { port: number | undefined; host: string };
  /** OpenTelemetry traces (ops/tracing.ts): undefined when off. */
  tracing: TracingConfig | undefined;
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
    /** Valid deliveries per window per server, and refused ones per source address. */
    rateLimit: { max: number; windowMs: number };
    /** TRUST_PROXY: which proxies' forwarded addresses are taken for the source; undefined: none. */
    trustProxy: TrustProxy;
    /**
     * Each server's events waiting at most, and stored per window at most: past them, 429
     * (store/webhooks.ts IntakeLimits).
     */
    intake: { maxPending: number; rate: { max: number; windowMs: number } };
  };
  shutdownTimeoutMs: number;
  /** How long a process holds a due reminder it claimed before another may take it over. */
  reminderClaimMs: number;
  /** Where the SQLite store is kept, when there is no databaseUrl. */
  dataDir: string;
  /** SQLite: how long a statement waits for another process's lock (the event loop free meanwhile). */
  sqliteLockWaitMs: number;
  /** The PostgreSQL store (secret: it may hold a password); undefined: SQLite in dataDir. */
  databaseUrl: string | undefined;
  /**
   * PostgreSQL: at most this many connections of this process (opened as its work needs them);
   * every process of every host counts against the server's max_connections.
   */
  databasePoolSize: number;
  logLevel: (typeof LOG_LEVELS)[number];
}

function shown(name: string, env: Environment): ConfigProblem['value'] {
  const value = env[name];
  if (value === undefined) return undefined;
  if (SECRET_VARIABLES.has(name)) return { hidden: true };
  return { shown: JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) };
}

/** A bot token's first part is its user ID in base64 (Discord's token format); undefined otherwise. */
export function botIdOfToken(token: string | undefined): string | undefined {
  const first = token?.split('.')[0];
  if (!first) return undefined;
  const id = Buffer.from(first, 'base64').toString('utf8');
  return /^\d{17,20}$/.test(id) ? id : undefined;
}

/**
 * Parses the environment; throws one ConfigError naming every bad variable, in the language of
 * its LC_ALL, LC_MESSAGES or LANG (i18n/operator.ts).
 */
export function loadConfig(env: Environment): Config {
  const result = SCHEMA.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue): ConfigProblem => {
      const name = String(issue.path[0] ?? '(environment)');
      const params = 'params' in issue ? (issue.params as Record<string, unknown> | undefined) : undefined;
      const value = shown(name, env);
      const message = messageOf({ message: issue.message, params });
      return value === undefined ? { name, message } : { name, message, value };
    });
    throw new ConfigError(problems, operatorLanguage(env));
  }
  const e = result.data;
  return {
    directory: directoryConfig(e),
    discord: {
      token: e.DISCORD_TOKEN,
      applicationId: e.DISCORD_APPLICATION_ID,
      botId: e.DISCORD_APPLICATION_ID ?? botIdOfToken(e.DISCORD_TOKEN),
      apiUrl: e.DISCORD_API_URL,
      restProxyUrl: e.DISCORD_REST_PROXY_URL,
      globalPerSecond: e.DISCORD_GLOBAL_RATE_LIMIT,
      devGuildId: e.DEV_GUILD_ID,
      identifyFloor: e.IDENTIFY_BUDGET_FLOOR,
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
    restProxy: { port: e.DISCORD_REST_PROXY_PORT, host: e.DISCORD_REST_PROXY_HOST },
    tracing: tracingConfig(e),
    httpPort: e.HTTP_PORT,
    httpHost: e.HTTP_HOST,
    webhook: {
      port: e.WEBHOOK_PORT,
      host: e.WEBHOOK_HOST,
      publicUrl: e.PUBLIC_URL,
      rateLimit: e.WEBHOOK_RATE_LIMIT,
      trustProxy: e.TRUST_PROXY,
      intake: { maxPending: e.WEBHOOK_SERVER_PENDING, rate: e.WEBHOOK_SERVER_RATE },
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    reminderClaimMs: e.REMINDER_CLAIM_MS,
    dataDir: e.DATA_DIR ?? 'data',
    sqliteLockWaitMs: e.SQLITE_LOCK_WAIT,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
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
  return [config.directory.token, config.directory.upToken, config.discord.token, ...database].filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
}

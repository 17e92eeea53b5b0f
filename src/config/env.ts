/**
 * The one place that reads the environment. Every variable the project knows is in SCHEMA;
 * a bad configuration is reported all at once, in plain words, without echoing secrets.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';

export type Environment = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Variables whose values are never shown, not even in an error about them. */
export const SECRET_VARIABLES = new Set(['DIRECTORY_TOKEN', 'DISCORD_TOKEN']);

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

function integer(min: number, max: number, fallback: number, unit = '') {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected a whole number from ${min} to ${max}${unit}` });
        return z.NEVER;
      }
      return n;
    });
}

function rate(fallback: string) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      const value = v === undefined || v.trim() === '' ? fallback : v.trim();
      const match = /^(\d+)\/(\d+)$/.exec(value);
      const max = Number(match?.[1]);
      const windowMs = Number(match?.[2]);
      if (!match || max < 1 || windowMs < 1) {
        ctx.addIssue({ code: 'custom', message: 'expected REQUESTS/MILLISECONDS, for example 5/5000' });
        return z.NEVER;
      }
      return { max, windowMs };
    });
}

function url(fallback: string) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      const value = v === undefined || v.trim() === '' ? fallback : v.trim();
      try {
        const parsed = new URL(value);
        if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return value.replace(/\/+$/, '');
      } catch {
        // reported below
      }
      ctx.addIssue({ code: 'custom', message: 'expected an http(s) URL' });
      return z.NEVER;
    });
}

function snowflake() {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      if (!/^\d{17,20}$/.test(v.trim())) {
        ctx.addIssue({ code: 'custom', message: 'expected a Discord ID (17 to 20 digits)' });
        return z.NEVER;
      }
      return v.trim();
    });
}

function optionalUrl() {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      try {
        const parsed = new URL(v.trim());
        if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return v.trim().replace(/\/+$/, '');
      } catch {
        // reported below
      }
      ctx.addIssue({ code: 'custom', message: 'expected an http(s) URL' });
      return z.NEVER;
    });
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

function duration(fallback: number) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const ms = parseDuration(v);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: 'expected a duration such as 30m, 900s or 1h' });
        return z.NEVER;
      }
      return ms;
    });
}

function flag() {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return false;
      const value = v.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(value)) return true;
      if (['0', 'false', 'no', 'off'].includes(value)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });
}

function shardCount() {
  return z
    .string()
    .optional()
    .transform((v, ctx): number | 'auto' => {
      if (v === undefined || v.trim() === '' || v.trim() === 'auto') return 'auto';
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 10_000) {
        ctx.addIssue({ code: 'custom', message: 'expected auto or a whole number of shards from 1' });
        return z.NEVER;
      }
      return n;
    });
}

function optionalPort() {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65_535) {
        ctx.addIssue({ code: 'custom', message: 'expected a port from 0 to 65535' });
        return z.NEVER;
      }
      return n;
    });
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) {
  return z
    .string()
    .optional()
    .transform((v, ctx): T[number] => {
      const value = v === undefined || v.trim() === '' ? fallback : v.trim();
      if (!(values as readonly string[]).includes(value)) {
        ctx.addIssue({ code: 'custom', message: `expected one of ${values.join(', ')}` });
        return z.NEVER;
      }
      return value as T[number];
    });
}

export const SCHEMA = z.object({
  DIRECTORY_API_URL: url('https://api.boticord.top'),
  DIRECTORY_API_VERSION: oneOf(['v1', 'v2'], 'v2'),
  DIRECTORY_TOKEN: optionalText,
  DIRECTORY_TOKEN_KIND: oneOf(['Bot', 'PrivateBot', 'Profile'], 'Bot'),
  DIRECTORY_TIMEOUT_MS: integer(100, 120_000, 10_000, ' (milliseconds)'),
  DIRECTORY_MAX_RETRIES: integer(0, 10, 2),
  DIRECTORY_RATE_LIMIT: rate('5/5000'),
  DIRECTORY_ROUTE_RATE_LIMIT: rate('1/2000'),
  DIRECTORY_RATE_LIMIT_MARGIN_MS: integer(0, 10_000, 25, ' (milliseconds)'),
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info'),
  DISCORD_TOKEN: optionalText,
  DISCORD_APPLICATION_ID: snowflake(),
  DISCORD_API_URL: optionalUrl(),
  DEV_GUILD_ID: snowflake(),
  STATS_INTERVAL: duration(30 * 60_000),
  STATS_ALLOW_SHORT_INTERVAL: flag(),
  SHARD_COUNT: shardCount(),
  HTTP_PORT: optionalPort(),
  HTTP_HOST: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? '0.0.0.0' : v.trim())),
  STATS_FIRST_DELAY: duration(30_000),
  DATA_DIR: optionalText,
  SHUTDOWN_TIMEOUT_MS: integer(500, 9_000, 6_000, ' (milliseconds)'),
  // Set by discord.js's ShardingManager in the processes it spawns; not for operators.
  SHARDING_MANAGER: flag(),
  SHARDS: z.string().optional(),
});

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
  };
  /** Operations endpoint (/healthz, /readyz, /metrics); off when undefined. */
  httpPort: number | undefined;
  /** Address the operations endpoint listens on. */
  httpHost: string;
  shutdownTimeoutMs: number;
  /** Where the bot keeps what must survive a restart (the journal of ups in flight). */
  dataDir: string;
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
    },
    httpPort: e.HTTP_PORT,
    httpHost: e.HTTP_HOST,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    dataDir: e.DATA_DIR ?? 'data',
    logLevel: e.LOG_LEVEL,
  };
}

/**
 * The process environment, with a `.env` file in the working directory filled in underneath
 * (variables already set win). The only read of process.env in the project.
 */
export function readEnvironment(cwd: string = process.cwd()): Environment {
  const env: Environment = { ...process.env };
  const file = `${cwd}/.env`;
  if (existsSync(file)) {
    const fromFile = parseEnv(readFileSync(file, 'utf8'));
    for (const [key, value] of Object.entries(fromFile)) {
      if (env[key] === undefined) env[key] = value;
    }
  }
  return env;
}

/** Every secret value in a configuration, for log scrubbing. */
export function secretsOf(config: Config): string[] {
  return [config.directory.token, config.discord.token].filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
}

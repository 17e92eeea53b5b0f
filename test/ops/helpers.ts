/**
 * Helpers for the operations tests: guild sets of varied sizes, probes of the operations
 * endpoint, Prometheus text parsing and the stats posts the directory received. The bot as a
 * child process, waits, log capture and the secret scan come from test/support (re-exported
 * here for the ops tests).
 */
import type { StatsBody } from '../../src/tasks/stats-poster.js';
import { type GuildFixture, makeGuild, makeGuilds } from '../discord/index.js';
import type { Emulator, RecordedRequest } from '../emulator/index.js';
import { BotProcess } from '../support/bot-process.js';
import { httpGet } from '../support/http.js';
import { LOCALHOST } from '../support/local.js';
import { eventually, START_BOUND_MS } from '../support/wait.js';

export { discordLikeToken } from '../discord/index.js';
export {
  BotProcess,
  type BotScript,
  DIST_BOT,
  descendantsOf,
  isAlive,
  ROOT,
} from '../support/bot-process.js';
export type { CapturedLine, Exit } from '../support/child.js';
export { httpGet } from '../support/http.js';
export { freePort, LOCALHOST } from '../support/local.js';
export { LEVEL, type LogEntry, LogSink } from '../support/logs.js';
export { leaksIn, linesOf } from '../support/secrets.js';
export { runScript } from '../support/spawn.js';
export { eventually, START_BOUND_MS, sleep, withTimeout } from '../support/wait.js';

/** Varied member counts: small servers, mid-sized ones and a few big ones. */
export function memberCountOf(i: number): number {
  if (i % 97 === 0) return 25_000 + i * 13;
  if (i % 10 === 0) return 1_000 + ((i * 211) % 4_000);
  return 2 + ((i * 37) % 480);
}

/** `n` guilds with varied member counts; `include` comes first (e.g. a server the directory knows). */
export function guildSet(
  n: number,
  include: ReadonlyArray<{ id: string; memberCount: number }> = [],
): { guilds: GuildFixture[]; users: number } {
  const generated = makeGuilds(n - include.length, {
    memberCountOf: (i) => memberCountOf(i + include.length),
  });
  const guilds = [...include.map((g) => makeGuild({ id: g.id, memberCount: g.memberCount })), ...generated];
  return { guilds, users: guilds.reduce((sum, g) => sum + g.member_count, 0) };
}

// ---- the operations endpoint -------------------------------------------------------------------

export interface ReadyBody {
  ready: boolean;
  detail?: { shards?: number; expected?: number; notReady?: number[] };
}

export async function readyz(port: number): Promise<{ status: number; body: ReadyBody }> {
  const answer = await httpGet(port, '/readyz');
  return { status: answer.status, body: JSON.parse(answer.body) as ReadyBody };
}

/** Polls /readyz until it answers `status`. */
export function readyzBecomes(
  port: number,
  status: 200 | 503,
  timeoutMs: number,
  everyMs = 50,
): Promise<{ status: number; body: ReadyBody; at: number }> {
  return eventually(
    async () => {
      const answer = await readyz(port);
      return answer.status === status ? { ...answer, at: Date.now() } : undefined;
    },
    timeoutMs,
    `/readyz to answer ${status}`,
    everyMs,
  );
}

/**
 * A bot process started: its operations port (the 'ops server listening' line), then /readyz 200,
 * both within `timeoutMs` (START_BOUND_MS: a busy machine is slow, not failing). A failure names
 * what was awaited and the last lines the process wrote.
 */
export async function startedReady(
  bot: BotProcess,
  timeoutMs = START_BOUND_MS,
): Promise<{ port: number; status: number; body: ReadyBody; at: number }> {
  const deadline = performance.now() + timeoutMs;
  const port = await bot.opsPort(timeoutMs);
  const left = Math.max(1, Math.round(deadline - performance.now()));
  try {
    return { port, ...(await readyzBecomes(port, 200, left, 100)) };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`${bot.name} (pid ${bot.pid}): ${why}; its last lines: ${bot.tail()}`);
  }
}

// ---- Prometheus text ----------------------------------------------------------------------------------

/** The value of one sample: the metric name and a subset of its labels, or undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      found[pair[1] as string] = pair[2] as string;
    }
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

// ---- the directory emulator ------------------------------------------------------------------------

export type { StatsBody };

/** Requests to POST /stats (any API version), in order of arrival. */
export function statsRequests(emu: Emulator): RecordedRequest[] {
  return emu.requests.filter((r) => r.method === 'POST' && /^\/v[12]\/stats(\?|$)/.test(r.path));
}

export function bodyOf(r: RecordedRequest): StatsBody {
  return JSON.parse(r.body) as StatsBody;
}

// ---- several hosts -----------------------------------------------------------------------------

/**
 * The REST proxy (`node dist/src/app/rest-proxy.js`, as the deploy files run it) in front of
 * Discord's stand-in, once it listens; `env` points a host at it (DISCORD_REST_PROXY_URL). The
 * caller stops the process.
 */
export async function startRestProxy(discordRestUrl: string): Promise<{
  proxy: BotProcess;
  env: { DISCORD_REST_PROXY_URL: string };
}> {
  const proxy = new BotProcess(
    'rest-proxy.js',
    {
      DISCORD_API_URL: discordRestUrl,
      DISCORD_REST_PROXY_PORT: '0',
      DISCORD_REST_PROXY_HOST: LOCALHOST,
      LOG_LEVEL: 'info',
    },
    'rest-proxy',
  );
  try {
    const line = await proxy.waitForLine(
      (e) => e.msg === 'REST proxy listening',
      START_BOUND_MS,
      'the proxy',
    );
    return { proxy, env: { DISCORD_REST_PROXY_URL: `http://${LOCALHOST}:${String(line.entry?.port)}` } };
  } catch (err) {
    await proxy.destroy().catch(() => undefined);
    throw err;
  }
}

/**
 * The environment of one bot host of several (`npm start` with SHARD_IDS) between the stand-ins:
 * the tests' and the bench's hosts alike. `extra` adds or overrides (rate limits, HOST_GONE_AFTER).
 */
/**
 * The pool of each process of a test that runs several bots on PostgreSQL (DATABASE_POOL_SIZE,
 * docs/configuration.md): three hosts of 10 beside other test files' bots filled the server's 100
 * connections once; with 4 each, a test's processes keep to a dozen, as an operator with many
 * processes on one server would set them.
 */
export const MANY_PROCESSES_POOL = { DATABASE_POOL_SIZE: '4' } as const;

export function hostEnv(options: {
  discord: { token: string; restUrl: string };
  directoryUrl: string;
  directoryToken: string;
  store: Record<string, string>;
  shardCount: number;
  /** Undefined: one host running every shard. */
  shardIds?: string | undefined;
  hostId: string;
  statsIntervalMs: number;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    DISCORD_TOKEN: options.discord.token,
    DISCORD_API_URL: options.discord.restUrl,
    DIRECTORY_API_URL: options.directoryUrl,
    DIRECTORY_API_VERSION: 'v2',
    DIRECTORY_TOKEN: options.directoryToken,
    HTTP_PORT: '0',
    LOG_LEVEL: 'info',
    ...options.store,
    SHARD_COUNT: String(options.shardCount),
    ...(options.shardIds === undefined ? {} : { SHARD_IDS: options.shardIds }),
    HOST_ID: options.hostId,
    STATS_INTERVAL: `${options.statsIntervalMs / 1000}s`,
    STATS_ALLOW_SHORT_INTERVAL: 'true',
    STATS_FIRST_DELAY: '1s',
    ...MANY_PROCESSES_POOL,
    ...options.extra,
  };
}

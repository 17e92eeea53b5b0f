/**
 * The fault suite: one table, one row per fault, each with the behaviour expected of the bot.
 * Directory faults and Discord faults are seen through the real bot (in-process harness, or the
 * built bot as a child process where the fault is the process itself: a fatal gateway close, a
 * kill during /up). A row never throws: it collects what it saw and what did not match, so the
 * summary at the end (`fault suite: N rows, M as expected`) and the table always print.
 *
 * Every row also checks that no token (the Discord token, the directory tokens) shows up in a log
 * line, a child's output or a body sent to Discord, and that nothing the bot sent can ping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIEmbed } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/config/env.js';
import { translator } from '../../src/i18n/index.js';
import {
  type DiscordStandIn,
  type InteractionHandle,
  makeGuild,
  type RecordedRestRequest,
  type SendCommandOptions,
  snowflake,
  startDiscordStandIn,
  type ViewedMessage,
} from '../discord/index.js';
import {
  type Answer,
  botEnvironment,
  closedPortUrl,
  discordLikeToken,
  type Harness,
  type HarnessOptions,
  isEphemeral,
  LEVEL,
  type LogEntry,
  liveMessages,
  mentionProblems,
  optionString,
  percentile,
  secretLeaks,
  sentMessages,
  startHarness,
} from '../e2e/harness.js';
import {
  type Emulator,
  type FaultRule,
  IDS,
  type RecordedRequest,
  startEmulator,
  TOKENS,
} from '../emulator/index.js';
import {
  BotChild,
  Checks,
  type HoldingProxy,
  hostileInputs,
  journalEntries,
  killAllChildren,
  LOCALHOST,
  leaksIn,
  message,
  startHoldingProxy,
  until,
  withTimeout,
} from './helpers.js';

// ---- the table ----------------------------------------------------------------------------------

interface Outcome {
  observed: string;
  problems: string[];
}

interface Row {
  id: string;
  fault: string;
  expected: string;
  /** vitest's bound for the row; the row itself gives up a second earlier. */
  timeoutMs: number;
  run: () => Promise<Outcome>;
}

interface Result extends Outcome {
  id: string;
  fault: string;
  ms: number;
}

const results: Result[] = [];
/** Row ids in table order (the order rows are scheduled in). */
const tableOrder: string[] = [];
/** What the token scan looked at, over every row (the last row reports it). */
const scanned = { logLines: 0, childLines: 0, discordBodies: 0, leaks: [] as string[] };
/** Servers and harnesses a row has not closed yet (afterAll closes what a failed row left). */
const open = new Set<() => Promise<void>>();
const SUITE_STARTED = performance.now();
/** vitest's bound for one test: a row bounds itself (timeoutMs), this only catches a hang of the suite. */
const TEST_BOUND_MS = 90_000;
/** Each harness listens for unhandled rejections; up to 16 run at once here. */
const MAX_LISTENERS = 40;
let previousMaxListeners = 10;

function track(close: () => Promise<void>): () => Promise<void> {
  let done = false;
  const once = async (): Promise<void> => {
    if (done) return;
    done = true;
    open.delete(once);
    await close();
  };
  open.add(once);
  return once;
}

async function execute(row: Row): Promise<Result> {
  const started = performance.now();
  let outcome: Outcome;
  try {
    outcome = await withTimeout(row.run(), row.timeoutMs - 1_000, `row ${row.id}`);
  } catch (err) {
    outcome = { observed: `threw: ${message(err)}`, problems: [`threw: ${message(err)}`] };
  }
  const result: Result = {
    id: row.id,
    fault: row.fault,
    ms: Math.round(performance.now() - started),
    ...outcome,
  };
  results.push(result);
  return result;
}

/** A row waiting for its stage: `result` settles once the stage has started and the row has run. */
interface Scheduled {
  row: Row;
  result: Promise<Result>;
  start: () => Promise<Result>;
}

function schedule(row: Row): Scheduled {
  tableOrder.push(row.id);
  let begin: (() => void) | undefined;
  const result = new Promise<Result>((resolve) => {
    begin = () => {
      void execute(row).then(resolve);
    };
  });
  return {
    row,
    result,
    start: () => {
      begin?.();
      begin = undefined;
      return result;
    },
  };
}

/** Starts every row of a stage at once; resolves when all are done (execute never rejects). */
async function runStage(stage: readonly Scheduled[]): Promise<void> {
  await Promise.all(stage.map((s) => s.start()));
}

/** One vitest test per row, in table order; it waits for the row's stage to run it. */
function tableRow(s: Scheduled): void {
  it(
    `${s.row.id} ${s.row.fault} → ${s.row.expected}`,
    async () => {
      const result = await s.result;
      expect(result.problems, `${s.row.id}: ${result.observed}`).toEqual([]);
    },
    TEST_BOUND_MS,
  );
}

afterAll(async () => {
  process.setMaxListeners(previousMaxListeners);
  const leftChildren = await killAllChildren();
  for (const close of [...open]) await close().catch(() => undefined);
  const sorted = [...results].sort((a, b) => tableOrder.indexOf(a.id) - tableOrder.indexOf(b.id));
  const ok = sorted.filter((r) => r.problems.length === 0).length;
  const width = Math.max(...sorted.map((r) => `${r.id} ${r.fault}`.length), 10);
  const table = sorted.map((r) => {
    const mark = r.problems.length === 0 ? 'ok  ' : 'FAIL';
    const head = `${mark} ${`${r.id} ${r.fault}`.padEnd(width)} ${String(r.ms).padStart(6)} ms │ `;
    const problems = r.problems.length === 0 ? '' : ` ✗ ${r.problems.join(' ✗ ')}`;
    return `${head}${r.observed}${problems}`;
  });
  const total = Math.round((performance.now() - SUITE_STARTED) / 1000);
  console.log(
    [
      `fault suite: ${sorted.length} rows, ${ok} as expected (${total} s)`,
      ...table,
      ...(leftChildren.length > 0 ? [`children killed by afterAll: ${leftChildren.join(', ')}`] : []),
    ].join('\n'),
  );
});

// ---- shared fixtures ----------------------------------------------------------------------------

const freshGuild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
const EN = translator('en-US');
const RU = translator('ru');
const WEBHOOK_FOLLOW_UP = /^\/webhooks\/\d+\/[^/]+$/;
const ORIGINAL = /^\/webhooks\/\d+\/[^/]+\/messages\/@original$/;

function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

function bumpsOf(emu: Emulator, serverId: string): number {
  return emu.state.servers.get(serverId)?.information.bumps ?? 0;
}

function firstEmbed(m: ViewedMessage | undefined): APIEmbed | undefined {
  return m?.embeds?.[0] as APIEmbed | undefined;
}

function newUserRef(prefix: string): NonNullable<SendCommandOptions['user']> {
  return { id: snowflake(), username: `${prefix}_${snowflake().slice(-6)}` };
}

/** Checks every in-process row makes: tokens, pings, unhandled rejections, channel posts. */
function harnessHygiene(h: Harness, c: Checks): void {
  const leaks = secretLeaks(h);
  scanned.logLines += h.lines.length;
  scanned.discordBodies += h.discord.requests.length;
  scanned.leaks.push(...leaks);
  c.none(leaks, 'a token leaked');
  c.none(h.unhandled.map(message), 'unhandled rejection');
  c.none(
    h.lines.filter((l) => /unhandled|uncaught/i.test(l)).map((l) => l.slice(0, 160)),
    'an unhandled error was logged',
  );
  const pings = sentMessages(h.discord.requests).flatMap((m) => mentionProblems(m));
  c.none(pings, 'a message could ping');
  const posts = h.discord.requests.filter((r) => r.method !== 'GET' && /^\/channels\//.test(r.path));
  c.none(
    posts.map((r) => `${r.method} ${r.path}`),
    'the bot posted into a channel',
  );
}

/** Runs `body` on a harness of its own (own emulator, stand-in, bot and data directory). */
async function inHarness(
  options: HarnessOptions,
  body: (h: Harness, c: Checks) => Promise<string>,
): Promise<Outcome> {
  const c = new Checks();
  const data = tempDir('faults-data-');
  const h = await startHarness({
    guilds: [freshGuild],
    // Tokens must not reach a log line at all, before the logger's scrubbing.
    scrubSecrets: false,
    ...options,
    env: { DATA_DIR: data.path, ...options.env },
  }).catch((err: unknown) => {
    data.remove();
    throw err;
  });
  const close = track(async () => {
    await h.close();
    data.remove();
  });
  let observed: string;
  try {
    observed = await body(h, c);
  } catch (err) {
    observed = `threw: ${message(err)}`;
    c.that(false, observed);
  }
  harnessHygiene(h, c);
  await close();
  c.none(h.stuckStops, 'the bot did not stop');
  return { observed: [observed, ...c.notes].join('; '), problems: c.problems };
}

// ---- directory faults through the bot -----------------------------------------------------------

type Level = 'info' | 'warn' | 'error';

interface DirectoryCase {
  id: string;
  fault: string;
  /** Overrides of the bot's environment (a function when they must be made first). */
  env?: Environment | (() => Promise<Environment>);
  faults?: FaultRule[];
  command: 'bot' | 'server' | 'up';
  locale: 'en-US' | 'ru';
  code: string;
  level: Level;
  /** The answer's description (title too for /up), in the case's locale. */
  text: string | RegExp;
  /** More checks on what the emulator saw. */
  extra?: (h: Harness, answer: Answer, c: Checks, bumpsBefore: number) => string;
}

function commandFor(kind: DirectoryCase['command']): Pick<SendCommandOptions, 'name' | 'options'> {
  if (kind === 'bot') return { name: 'bot', options: [optionString('ref', 'kerdoku')] };
  if (kind === 'server') return { name: 'server', options: [optionString('ref', IDS.serverFresh)] };
  return { name: 'up' };
}

function directoryRow(spec: DirectoryCase): Row {
  const t = spec.locale === 'ru' ? RU : EN;
  const shown = typeof spec.text === 'string' ? spec.text : spec.text.source;
  return {
    id: spec.id,
    fault: spec.fault,
    expected: `private "${shown.slice(0, 40)}…", one ${spec.level} line`,
    timeoutMs: 25_000,
    run: async () =>
      inHarness(
        { env: typeof spec.env === 'function' ? await spec.env() : (spec.env ?? {}) },
        async (h, c) => {
          for (const rule of spec.faults ?? []) h.emu.faults.add(rule);
          const bumpsBefore = bumpsOf(h.emu, IDS.serverFresh);
          const answer = await h.run(
            {
              guildId: freshGuild.id,
              locale: spec.locale,
              user: newUserRef('dir'),
              ...commandFor(spec.command),
            },
            15_000,
          );
          const first = await answer.handle.firstResponse(1_000);
          const deferMs = Math.round(first.at - answer.handle.sentAt);
          c.that(first.type === 5, `first response type ${first.type}, not a deferral`);
          c.that(deferMs < 3_000, `deferred after ${deferMs} ms (Discord allows 3 s)`);
          c.equal(answer.outcome, `error:${spec.code}`, 'outcome');
          // Private: the public placeholder deleted, one ephemeral follow-up left.
          const live = liveMessages(answer.view);
          c.that(answer.view.original?.deleted === true, 'the public placeholder was not deleted');
          c.that(
            live.length === 1 && live.every(isEphemeral),
            `left ${live.length} message(s), not 1 private`,
          );
          const embed = firstEmbed(live[0]);
          const description = embed?.description ?? '';
          if (typeof spec.text === 'string') c.equal(description, spec.text, 'answer');
          else c.that(spec.text.test(description), `answer ${JSON.stringify(description)} !~ ${spec.text}`);
          if (spec.command === 'up') c.equal(embed?.title, `❌ ${t('up.title.error')}`, 'title');
          // One log line at the level of the error; nothing louder anywhere.
          const failures = h.entries().filter((e) => e.msg === 'command failed');
          c.equal(
            failures.map((e) => [e.level, e.code, e.userId]),
            [[LEVEL[spec.level], spec.code, answer.line.userId]],
            '"command failed" lines',
          );
          const loud = h.entries().filter((e) => e.level >= LEVEL.warn);
          c.equal(
            loud.map((e) => e.msg),
            spec.level === 'info' ? [] : ['command failed'],
            'lines at warn or above',
          );
          const more = spec.extra?.(h, answer, c, bumpsBefore);
          const total = Math.round((answer.line.durationMs as number | undefined) ?? 0);
          return (
            `${answer.outcome}, private ${JSON.stringify(description.slice(0, 48))}, ` +
            `${spec.level} ×1, deferral ${deferMs} ms, answer ${total} ms${more ? `, ${more}` : ''}`
          );
        },
      ),
  };
}

function directoryRequests(h: Harness, method: string, path: RegExp): RecordedRequest[] {
  return h.emu.requests.filter((r) => r.method === method && path.test(r.path));
}

const DIRECTORY_CASES: DirectoryCase[] = [
  {
    id: 'D1',
    fault: 'directory: connection refused (/bot)',
    env: async () => ({ DIRECTORY_API_URL: await closedPortUrl() }),
    command: 'bot',
    locale: 'en-US',
    code: 'Unavailable',
    level: 'warn',
    text: `❌ ${EN('errors.unavailable')}`,
    extra: (h, _a, c) => {
      c.equal(h.emu.requests.length, 0, 'requests reaching the emulator');
      return 'nothing reached the emulator';
    },
  },
  {
    id: 'D2',
    fault: 'directory: 5 s stall, timeout 1 s (/bot)',
    env: { DIRECTORY_TIMEOUT_MS: '1000' },
    faults: [{ kind: 'stall', ms: 5_000, path: /^\/bot\// }],
    command: 'bot',
    locale: 'en-US',
    code: 'Unavailable',
    level: 'warn',
    text: `❌ ${EN('errors.unavailable')}`,
    extra: (h) => `${directoryRequests(h, 'GET', /^\/v2\/bot\//).length} attempts`,
  },
  {
    id: 'D3',
    fault: 'directory: 500 JSON (/up, ru)',
    faults: [{ kind: 'status', status: 500, method: 'POST', path: /^\/server$/, message: 'Internal error' }],
    command: 'up',
    locale: 'ru',
    code: 'Unavailable',
    level: 'warn',
    text: RU('errors.unavailable'),
    extra: (h, _a, c, before) => {
      const posts = directoryRequests(h, 'POST', /^\/v2\/server$/).length;
      c.equal(posts, 1, 'POST /server attempts (a 500 may have acted: not repeated)');
      c.equal(bumpsOf(h.emu, IDS.serverFresh), before, 'bumps');
      return `${posts} POST, bumps unchanged`;
    },
  },
  {
    id: 'D4',
    fault: 'directory: 502 HTML page (/bot)',
    faults: [{ kind: 'html', status: 502, path: /^\/bot\// }],
    command: 'bot',
    locale: 'en-US',
    code: 'Unavailable',
    level: 'warn',
    text: `❌ ${EN('errors.unavailable')}`,
    extra: (h) => `${directoryRequests(h, 'GET', /^\/v2\/bot\//).length} attempts`,
  },
  {
    id: 'D5',
    fault: 'directory: invalid JSON (/bot, ru)',
    faults: [{ kind: 'invalid-json', path: /^\/bot\// }],
    command: 'bot',
    locale: 'ru',
    code: 'InvalidResponse',
    level: 'error',
    text: `❌ ${RU('errors.invalidResponse')}`,
  },
  {
    id: 'D6',
    fault: 'directory: schema drift (/server)',
    faults: [{ kind: 'drift', path: /^\/server\// }],
    command: 'server',
    locale: 'en-US',
    code: 'InvalidResponse',
    level: 'error',
    text: `❌ ${EN('errors.invalidResponse')}`,
  },
  {
    id: 'D7',
    fault: 'directory: 429 Retry-After 1 s (/bot)',
    faults: [{ kind: 'rate-limit', retryAfterMs: 1_000, path: /^\/bot\// }],
    command: 'bot',
    locale: 'en-US',
    code: 'RateLimited',
    level: 'info',
    text: /^❌ The directory is busy\. Try again <t:\d+:R>\.$/,
    extra: (h) => `${directoryRequests(h, 'GET', /^\/v2\/bot\//).length} attempts`,
  },
  {
    id: 'D8',
    fault: 'directory: 429 without Retry-After (/up)',
    faults: [{ kind: 'rate-limit', method: 'POST', path: /^\/server$/ }],
    command: 'up',
    locale: 'en-US',
    code: 'RateLimited',
    level: 'info',
    text: EN('errors.rateLimitedNoWait'),
    extra: (h, _a, c, before) => {
      c.equal(bumpsOf(h.emu, IDS.serverFresh), before, 'bumps');
      return `${directoryRequests(h, 'POST', /^\/v2\/server$/).length} POST attempts, bumps unchanged`;
    },
  },
];

// ---- Discord gateway closes ---------------------------------------------------------------------

type Recovery = 'resume' | 'identify' | 'resume refused, identify';

const RECOVERY_KINDS: Record<Recovery, string[]> = {
  resume: ['resume', 'resumed'],
  identify: ['identify', 'ready'],
  'resume refused, identify': ['resume', 'invalid_session', 'identify', 'ready'],
};

function gatewayRow(id: string, code: number, recovery: Recovery): Row {
  return {
    id,
    fault: `gateway close ${code}`,
    expected: `${recovery}, then /bot answered`,
    timeoutMs: 25_000,
    run: () =>
      inHarness({}, async (h, c) => {
        const from = h.discord.gatewayLog.length;
        const closedAt = performance.now();
        h.discord.disconnectShard(0, code);
        const back = await until(
          () => h.discord.gatewayLog.slice(from).find((e) => e.kind === 'ready' || e.kind === 'resumed'),
          15_000,
          'shard 0 to be back',
        );
        const backMs = Math.round(back.at - closedAt);
        const kinds = h.discord.gatewayLog
          .slice(from)
          .map((e) => e.kind)
          .filter((k) => k !== 'connect' && k !== 'close');
        c.equal(kinds, RECOVERY_KINDS[recovery], 'gateway log after the close');
        const answer = await h.run(
          { guildId: freshGuild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] },
          10_000,
        );
        c.equal(answer.outcome, 'shown', 'outcome of /bot after the reconnect');
        const live = liveMessages(answer.view);
        c.that(
          live.length === 1 && !isEphemeral(live[0] as ViewedMessage),
          'the card is not one public message',
        );
        c.equal(firstEmbed(live[0])?.title, 'Bot kerdoku', 'card title');
        const fatal = h.entries().filter((e) => e.level >= LEVEL.error);
        c.none(
          fatal.map((e) => String(e.msg)),
          'error or fatal lines',
        );
        const warned = h.entries().some((e) => e.msg === 'shard disconnected' && e.code === code);
        const note = warned ? ' (warn logged)' : '';
        return `${kinds.join(' → ')} after ${backMs} ms${note}; /bot ${answer.outcome}`;
      }),
  };
}

// ---- a 429 on the interaction webhook -----------------------------------------------------------

const webhookRow: Row = {
  id: 'W1',
  fault: 'Discord: 429 on PATCH @original',
  expected: 'discord.js waits and retries; the card arrives',
  timeoutMs: 20_000,
  run: () =>
    inHarness({}, async (h, c) => {
      h.discord.injectRestFault({
        method: 'PATCH',
        path: ORIGINAL,
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: 0.75, global: false, code: 0 },
        headers: {
          'retry-after': '1',
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': '0.750',
          'x-ratelimit-bucket': 'faults-webhook',
          'x-ratelimit-scope': 'user',
        },
        times: 1,
      });
      const answer = await h.run(
        { guildId: freshGuild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] },
        15_000,
      );
      const patches = answer.requests.filter((r) => r.method === 'PATCH' && ORIGINAL.test(r.path));
      c.equal(
        patches.map((r) => r.status),
        [429, 200],
        'PATCH @original statuses',
      );
      c.equal(answer.outcome, 'shown', 'outcome');
      c.equal(firstEmbed(answer.view.original)?.title, 'Bot kerdoku', 'the card');
      c.that(answer.view.original?.deleted !== true, 'the card was deleted');
      const [first, second] = patches;
      const waited = first && second ? Math.round(second.at - first.at) : -1;
      c.that(waited >= 500, `retried after ${waited} ms, before the 429's wait`);
      const statuses = patches.map((r) => r.status).join(' → ');
      return `PATCH ${statuses}, retried after ${waited} ms; ${answer.outcome}`;
    }),
};

// ---- the real process ---------------------------------------------------------------------------

interface World {
  emu: Emulator;
  discord: DiscordStandIn;
  dataDir: string;
  close: () => Promise<void>;
}

async function startWorld(): Promise<World> {
  const emu = await startEmulator({ rateLimits: false });
  const discord = await startDiscordStandIn({ token: discordLikeToken(), guilds: [freshGuild] });
  const data = tempDir('faults-proc-data-');
  const close = track(async () => {
    await discord.close();
    await emu.close();
    data.remove();
  });
  return { emu, discord, dataDir: data.path, close };
}

function childEnv(
  world: World,
  overrides: { discordApi?: string; directoryApi?: string } = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  const settings = botEnvironment(world.emu, world.discord, {
    DATA_DIR: world.dataDir,
    SHUTDOWN_TIMEOUT_MS: '1000',
    ...(overrides.discordApi ? { DISCORD_API_URL: overrides.discordApi } : {}),
    ...(overrides.directoryApi ? { DIRECTORY_API_URL: overrides.directoryApi } : {}),
  });
  for (const [name, value] of Object.entries(settings)) if (value !== undefined) env[name] = value;
  for (const url of [env.DISCORD_API_URL ?? '', env.DIRECTORY_API_URL ?? '']) {
    if (new URL(url).hostname !== LOCALHOST) throw new Error(`${url} is not on ${LOCALHOST}`);
  }
  return env;
}

/** Token scan over children's output and everything sent to the stand-in. */
function processHygiene(world: World, procs: readonly BotChild[], c: Checks): void {
  const secrets = [world.discord.token, TOKENS.serviceBot];
  const childTexts = procs.flatMap((p) =>
    p.lines.map((l, i) => ({ where: `${p.name} ${l.stream} ${i}`, text: l.raw })),
  );
  const bodies = world.discord.requests.map((r) => ({
    where: `${r.method} ${r.path}`,
    text: `${r.path} ${r.query} ${r.body === undefined ? '' : JSON.stringify(r.body)}`,
  }));
  const leaks = leaksIn([...childTexts, ...bodies], secrets);
  scanned.childLines += childTexts.length;
  scanned.discordBodies += bodies.length;
  scanned.leaks.push(...leaks);
  c.none(leaks, 'a token leaked');
  const pings = sentMessages(world.discord.requests).flatMap((m) => mentionProblems(m));
  c.none(pings, 'a message could ping');
  const unhandled = procs.flatMap((p) => p.lines.filter((l) => /unhandled|uncaught/i.test(l.raw)));
  c.none(
    unhandled.map((l) => l.raw.slice(0, 160)),
    'an unhandled error was logged',
  );
}

const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

const fatalCloseRow: Row = {
  id: 'P1',
  fault: 'gateway close 4004 (main.js)',
  expected: 'exits non-zero in a few s, one stderr line naming DISCORD_TOKEN, no stack',
  timeoutMs: 25_000,
  run: async () => {
    const c = new Checks();
    const world = await startWorld();
    const proc = new BotChild('P1', childEnv(world));
    let observed = '';
    try {
      await proc.ready(12_000);
      const closedAt = performance.now();
      const from = world.discord.gatewayLog.length;
      world.discord.disconnectShard(0, 4004);
      const exit = await withTimeout(proc.exited, 8_000, 'the process to exit after 4004');
      const exitMs = Math.round(exit.at - closedAt);
      c.that(exit.code !== null && exit.code !== 0, `exit code ${exit.code} (signal ${exit.signal})`);
      c.that(exitMs < 5_000, `exited ${exitMs} ms after the close`);
      const stderr = proc.stderr;
      c.that(/DISCORD_TOKEN/.test(stderr), `stderr does not name DISCORD_TOKEN: ${JSON.stringify(stderr)}`);
      c.that(!STACK_LINE.test(stderr), 'stderr has a stack trace');
      const stderrLines = stderr.split('\n').filter((l) => l.trim() !== '');
      c.that(stderrLines.length <= 2, `stderr has ${stderrLines.length} lines`);
      const again = world.discord.gatewayLog
        .slice(from)
        .filter((e) => e.kind === 'identify' || e.kind === 'resume');
      c.equal(again.length, 0, 'reconnect attempts after 4004');
      const stdoutStacks = proc.lines.filter((l) => l.stream === 'stdout' && /\\n\s+at /.test(l.raw)).length;
      const fatalLines = proc.lines.filter((l) => l.entry?.level === LEVEL.fatal).length;
      observed =
        `exit ${exit.code} after ${exitMs} ms; stderr ${JSON.stringify(stderrLines.join(' / '))}; ` +
        `${fatalLines} fatal log line(s), ${stdoutStacks} stack(s) in the JSON log`;
    } catch (err) {
      observed = `threw: ${message(err)}`;
      c.that(false, observed);
    }
    await proc.stop();
    processHygiene(world, [proc], c);
    await world.close();
    return { observed, problems: c.problems };
  },
};

/** The answer B gave to the interaction: a follow-up or an edit of @original that went through. */
function isFinalAnswer(r: RecordedRestRequest): boolean {
  if (r.status >= 300) return false;
  return (
    (r.method === 'POST' && WEBHOOK_FOLLOW_UP.test(r.path)) || (r.method === 'PATCH' && ORIGINAL.test(r.path))
  );
}

interface KillPlan {
  id: string;
  fault: string;
  expected: string;
  /** 'cooldown' when A's up reached the directory (B's repeat is refused), else 'success'. */
  answer: 'cooldown' | 'success';
  /** Sets the trap up; returns what A's environment needs. */
  prepare: (world: World) => Promise<{ discordApi?: string; directoryApi?: string; proxy?: HoldingProxy }>;
  /** Resolves once A is where it must die; returns a description. */
  reached: (world: World, proxy: HoldingProxy | undefined, handle: InteractionHandle) => Promise<string>;
  /** After A died, before B starts: e.g. let the directory finish A's up. */
  afterKill?: (world: World, proxy: HoldingProxy | undefined, c: Checks) => Promise<void>;
}

function postsToServer(emu: Emulator): RecordedRequest[] {
  return emu.requests.filter((r) => r.method === 'POST' && r.path === '/v2/server');
}

function killRow(plan: KillPlan): Row {
  return {
    id: plan.id,
    fault: plan.fault,
    expected: plan.expected,
    timeoutMs: 40_000,
    run: async () => {
      const c = new Checks();
      const world = await startWorld();
      const t = EN;
      const procs: BotChild[] = [];
      let proxy: HoldingProxy | undefined;
      let observed = '';
      try {
        const setup = await plan.prepare(world);
        proxy = setup.proxy;
        const env = childEnv(world, setup);
        const a = new BotChild(`${plan.id}-A`, env);
        procs.push(a);
        await a.ready(12_000);
        const bumpsBefore = bumpsOf(world.emu, IDS.serverFresh);
        const handle = world.discord.sendCommand({
          guildId: freshGuild.id,
          name: 'up',
          user: newUserRef('kill'),
        });
        const deferral = await handle.firstResponse(3_000);
        c.equal(deferral.type, 5, 'A deferred');
        const where = await plan.reached(world, proxy, handle);
        const journaled = journalEntries(world.dataDir).map((e) => e.interactionId);
        a.kill('SIGKILL');
        const exitA = await withTimeout(a.exited, 3_000, 'A to die');
        c.equal(exitA.signal, 'SIGKILL', 'A ended by');
        c.none(
          handle
            .requests()
            .filter(isFinalAnswer)
            .map((r) => `${r.method} ${r.path}`),
          'A answered before it died',
        );
        await plan.afterKill?.(world, proxy, c);
        if (proxy) proxy.hold = undefined;
        const b = new BotChild(`${plan.id}-B`, env);
        procs.push(b);
        const bStarted = performance.now();
        await b.ready(12_000);
        const bReadyMs = Math.round(performance.now() - bStarted);
        const final = await handle.waitFor(isFinalAnswer, 5_000).catch(() => undefined);
        const bumpsAfter = bumpsOf(world.emu, IDS.serverFresh);
        c.equal(bumpsAfter - bumpsBefore, 1, 'bumps added');
        const held = journaled.includes(handle.id) ? 'the up' : `${journaled.length} entries`;
        const journalSaw = `journal held ${held}`;
        if (!c.that(final !== undefined, `B did not answer the interaction (${journalSaw} when A died)`)) {
          observed =
            `${where}; A killed; ${journalSaw}; B ready in ${bReadyMs} ms, no answer within 5 s; ` +
            `bumps +${bumpsAfter - bumpsBefore}`;
        } else {
          c.that((final?.at ?? 0) > bStarted, 'the answer came before B started');
          const view = handle.view();
          const live = liveMessages(view);
          c.equal(live.length, 1, 'messages left');
          const shown = live[0];
          const embed = firstEmbed(shown);
          c.equal(embed?.footer?.text, t('up.afterRestart'), 'the restart note');
          c.that(
            (embed?.title ?? '').endsWith(t(`up.title.${plan.answer}`)),
            `answer title ${JSON.stringify(embed?.title)}, expected ${plan.answer}`,
          );
          c.equal(shown ? isEphemeral(shown) : undefined, plan.answer !== 'success', 'answer is private');
          const line = await b
            .waitForEntry(
              (e) => e.msg === 'answered an up from before the restart',
              3_000,
              'the recovery line',
            )
            .catch(() => undefined);
          c.equal(line?.outcome, plan.answer, 'recovery line outcome');
          await until(
            () => (journalEntries(world.dataDir).length === 0 ? true : undefined),
            3_000,
            'the journal to be emptied',
          ).catch(() => c.that(false, 'the journal still holds the up'));
          observed =
            `${where}; A killed (${journalSaw}); ` +
            `B answered ${shown && isEphemeral(shown) ? 'privately' : 'publicly'} "${embed?.title}" ` +
            `${Math.round((final?.at ?? 0) - bStarted)} ms after start (ready ${bReadyMs}); ` +
            `bumps +${bumpsAfter - bumpsBefore}; ` +
            `${postsToServer(world.emu).length} POST /server reached the directory`;
        }
      } catch (err) {
        observed = `threw: ${message(err)}`;
        c.that(false, observed);
      }
      const exits = await Promise.all(procs.map((p) => p.stop()));
      const bExit = exits[1];
      if (bExit) c.equal(bExit.code, 0, 'B exit code on SIGTERM');
      processHygiene(world, procs, c);
      await proxy?.close();
      await world.close();
      return { observed, problems: c.problems };
    },
  };
}

const killRows: Row[] = [
  killRow({
    id: 'P2',
    fault: 'SIGKILL while POST /server is at the directory',
    expected: 'B repeats, the cooldown refuses, private "Not yet" + note; bumps +1',
    answer: 'cooldown',
    prepare: async (world) => {
      world.emu.faults.add({ kind: 'latency', ms: 2_500, method: 'POST', path: /^\/server$/, times: 1 });
      return {};
    },
    reached: async (world) => {
      await until(
        () => postsToServer(world.emu).find((r) => r.body !== ''),
        10_000,
        'the directory to receive POST /server',
      );
      return 'POST /server received by the directory';
    },
    afterKill: async (world, _proxy, c) => {
      const post = postsToServer(world.emu)[0];
      await until(
        () => (post && post.status !== 0 ? true : undefined),
        5_000,
        'the directory to finish the up',
      );
      c.equal(post?.status, 200, 'status of the up A sent');
    },
  }),
  killRow({
    id: 'P3',
    fault: 'SIGKILL while POST /server is held on the way',
    expected: 'B raises the server: public success + note; bumps +1',
    answer: 'success',
    prepare: async (world) => {
      const proxy = await startHoldingProxy(world.emu.url);
      track(proxy.close);
      proxy.hold = (method, url) => method === 'POST' && url.startsWith('/v2/server');
      return { proxy, directoryApi: proxy.url };
    },
    reached: async (world, proxy, _handle) => {
      await until(() => proxy?.held.find((r) => r.body !== ''), 10_000, 'POST /server to be held');
      const reachedDirectory = postsToServer(world.emu).length;
      if (reachedDirectory !== 0) throw new Error('the POST reached the directory');
      return 'POST /server held by the proxy (never reached the directory)';
    },
  }),
  killRow({
    id: 'P4',
    fault: 'SIGKILL while /up gathers guild stats',
    expected: 'B raises the server: public success + note; bumps +1',
    answer: 'success',
    prepare: async (world) => {
      const proxy = await startHoldingProxy(new URL(world.discord.restUrl).origin);
      track(proxy.close);
      const guildPath = `/api/v10/guilds/${freshGuild.id}`;
      proxy.hold = (method, url) =>
        method === 'GET' && (url === guildPath || url.startsWith(`${guildPath}?`));
      return { proxy, discordApi: `${proxy.url}/api` };
    },
    reached: async (world, proxy) => {
      await until(() => proxy?.held[0], 10_000, 'GET /guilds/:id to be held');
      if (postsToServer(world.emu).length !== 0) throw new Error('the POST reached the directory');
      return 'GET /guilds/:id held (stats being gathered)';
    },
  }),
];

// ---- 1,000 hostile inputs -----------------------------------------------------------------------

const FUZZ_SEED = 0x5eed_f417;
const FUZZ_COUNT = 1_000;
const FUZZ_BATCH = 50;
const ALLOWED_ROUTE = /^\/v2\/(bot|server)\/([^/?#]+)$/;
const SNOWFLAKE = /^\d{17,20}$/;
const SHORT_CODE = /^[A-Za-z0-9_-]{1,32}$/;

const fuzzRow: Row = {
  id: 'F1',
  fault: `${FUZZ_COUNT} hostile /bot and /server refs (seed ${FUZZ_SEED.toString(16)})`,
  expected: 'all answered, only intended routes, no ping, no crash',
  timeoutMs: 60_000,
  run: () =>
    inHarness({}, async (h, c) => {
      const inputs = hostileInputs(FUZZ_SEED, FUZZ_COUNT);
      const outcomes = new Map<string, number>();
      const deferrals: number[] = [];
      const unanswered: string[] = [];
      for (let i = 0; i < inputs.length; i += FUZZ_BATCH) {
        const batch = inputs.slice(i, i + FUZZ_BATCH).map((value, j) => {
          const name = (i + j) % 2 === 0 ? 'bot' : 'server';
          const pending = h.send(
            { guildId: freshGuild.id, name, user: newUserRef('fuzz'), options: [optionString('ref', value)] },
            20_000,
          );
          return { value, name, pending };
        });
        const settled = await Promise.allSettled(batch.map((b) => b.pending.done));
        settled.forEach((s, j) => {
          const sent = batch[j];
          if (!sent) return;
          const label = `/${sent.name} ${JSON.stringify(sent.value.slice(0, 40))}`;
          if (s.status === 'rejected') {
            unanswered.push(`${label}: ${message(s.reason)}`);
            return;
          }
          const answer = s.value;
          outcomes.set(answer.outcome, (outcomes.get(answer.outcome) ?? 0) + 1);
          const first = answer.requests.find((r) => r.method === 'POST' && /\/callback$/.test(r.path));
          if (first) deferrals.push(first.at - answer.handle.sentAt);
          if (liveMessages(answer.view).length !== 1)
            unanswered.push(`${label}: ${JSON.stringify(answer.view)}`);
        });
      }
      c.none(unanswered, 'not answered');
      const expectedOutcomes = new Set(['shown', 'error:InvalidInput', 'error:NotFound']);
      c.none(
        [...outcomes.keys()].filter((o) => !expectedOutcomes.has(o)),
        'unexpected outcomes',
      );
      const stray = h.emu.requests.filter((r) => {
        const m = ALLOWED_ROUTE.exec(r.path);
        const ref = m?.[2] ?? '';
        return r.method !== 'GET' || !m || !(SNOWFLAKE.test(ref) || SHORT_CODE.test(ref));
      });
      c.none(
        stray.map((r) => `${r.method} ${r.path.slice(0, 80)}`),
        'requests to unintended routes',
      );
      const late = deferrals.filter((d) => d >= 3_000).length;
      c.equal(late, 0, 'deferrals at or after 3 s');
      const errors = h.entries().filter((e: LogEntry) => e.level >= LEVEL.error);
      c.none(
        errors.map((e) => String(e.msg)),
        'error lines',
      );
      // Still alive: an ordinary look-up after the storm.
      const after = await h.run(
        { guildId: freshGuild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] },
        10_000,
      );
      c.equal(after.outcome, 'shown', '/bot after the storm');
      const counts = [...outcomes.entries()].map(([o, n]) => `${o} ${n}`).join(', ');
      const long = inputs.filter((v) => v.length >= 6_000).length;
      const p95 = Math.round(percentile(deferrals, 95));
      const max = Math.round(Math.max(...deferrals));
      return (
        `${FUZZ_COUNT - unanswered.length}/${FUZZ_COUNT} answered ` +
        `(${counts}; ${long} inputs ≥ 6000 chars); ` +
        `${h.emu.requests.length} directory requests, ${stray.length} stray; deferral p95 ${p95} ms, ` +
        `max ${max} ms; /bot after: ${after.outcome}`
      );
    }),
};

// ---- the rows, in stages ------------------------------------------------------------------------

/**
 * The hostile-input row is long but mostly waits (discord.js keeps the bot under Discord's 50
 * requests per second, interaction answers included), so it runs alongside everything else:
 * first the in-process directory, webhook and gateway rows together, then the process rows.
 */
const directory = DIRECTORY_CASES.map((spec) => schedule(directoryRow(spec)));
const webhook = schedule(webhookRow);
const gateway = [
  schedule(gatewayRow('G1', 1000, 'identify')),
  schedule(gatewayRow('G2', 1006, 'resume')),
  schedule(gatewayRow('G3', 4000, 'resume')),
  schedule(gatewayRow('G4', 4007, 'identify')),
  schedule(gatewayRow('G5', 4009, 'resume refused, identify')),
];
const processes = [schedule(fatalCloseRow), ...killRows.map(schedule)];
const fuzz = schedule(fuzzRow);
const everyRow = [...directory, webhook, ...gateway, ...processes, fuzz];

const tokenRow: Row = {
  id: 'T1',
  fault: 'tokens in logs, output, replies, errors',
  expected: 'DISCORD_TOKEN / DIRECTORY_TOKEN values nowhere',
  timeoutMs: TEST_BOUND_MS,
  run: async () => {
    const c = new Checks();
    c.none(scanned.leaks, 'token leaks');
    c.that(scanned.logLines > 0 && scanned.childLines > 0, 'nothing was scanned');
    return {
      observed:
        `${scanned.leaks.length} leaks in ${scanned.logLines} log lines, ` +
        `${scanned.childLines} child lines, ` +
        `${scanned.discordBodies} requests to Discord`,
      problems: c.problems,
    };
  },
};
const tokens = schedule(tokenRow);

beforeAll(() => {
  previousMaxListeners = process.getMaxListeners();
  process.setMaxListeners(Math.max(previousMaxListeners, MAX_LISTENERS));
  void fuzz.start();
  void (async () => {
    await runStage([...directory, webhook, ...gateway]);
    await runStage(processes);
    await Promise.all(everyRow.map((s) => s.result));
    await tokens.start();
  })();
});

describe('directory faults through the bot', () => {
  for (const s of [...directory, webhook]) tableRow(s);
});

describe('Discord gateway closes', () => {
  for (const s of gateway) tableRow(s);
});

describe('the bot process', () => {
  for (const s of processes) tableRow(s);
});

describe('hostile input', () => {
  tableRow(fuzz);
});

describe('every row', () => {
  tableRow(tokens);
});

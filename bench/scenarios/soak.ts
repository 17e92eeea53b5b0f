/**
 * Scenario 17: a soak (issue 39, item 4). One bot, the in-process world of the end-to-end tests
 * (`startBotRig`: the Discord stand-in, the directory emulator and the bot with its store, SQLite
 * in a fresh data directory, all in this process), under a steady mixed load for SOAK_MINUTES
 * (default 30): an /up every 2 s, rotating over 50 servers (each upped every 100 s, the emulator's
 * cooldown 60 s, so every up is accepted), a look-up (/bot, /server, /profile in turn) every 2 s
 * between them, a webhook delivery (a comment) to the bot's receiver every 3 s for 10 servers, and
 * a /leaderboard once a minute. Each server has its reminders on (`/settings reminders channel:`),
 * so each accepted up sets a reminder that falls due 60 s later and is posted: about 30 reminders
 * a minute, and the next up in the server (40 s after the post) takes it and edits it.
 *
 * Each sample (SOAK_SAMPLE_MS, default 60 s), after `global.gc` when the process has it: heap used
 * and RSS, the open file descriptors (/proc/self/fd), the event loop's delay p99 over the period
 * (monitorEventLoopDelay, reset after each sample) and the store's size (the SQLite file and its
 * WAL). At the end: least-squares slopes after the warm-up (the first 5 minutes, or the first third
 * of a run shorter than 15 minutes), and the targets judged: RSS slope ≤ 1 MB per 10 minutes, no
 * descriptor growth (the last third's most ≤ the warm-up's most), loop p99 flat (the second half's
 * median ≤ 1.5× the first half's). Every command must be answered and every reminder due posted.
 *
 * The stand-ins share this process (so do the descriptors counted): every 10 s the stand-in lets
 * go of the finished interactions (`forget`) and both stand-ins' request logs are emptied. What
 * the stand-in cannot let go of is the channel messages the bot posts (the reminders, which the
 * bot edits later, and the announcements): their count and size are reported beside the slopes.
 */
import { readdirSync, statSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { APIApplicationCommandInteractionDataOption as CommandOption } from 'discord.js';
import { Pool } from 'undici';
import {
  commandOption,
  type GuildFixture,
  type InteractionHandle,
  isFinalAnswer,
  makeGuilds,
  Permission,
  type RecordedRestRequest,
  snowflake,
} from '../../test/discord/index.js';
import { startBotRig } from '../lib/bot.js';
import { isQuick } from '../lib/env.js';
import { atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { linearFit, MB, median, sleep } from '../lib/stats.js';

const SCENARIO = '17. Soak';
const SERVERS = 50;
const WEBHOOK_SERVERS = 10;
/** One action a tick: an /up on even ticks, a look-up on odd ones. */
const TICK_MS = 1_000;
/** A webhook delivery every this many ticks. */
const DELIVERY_EVERY = 3;
/** A /leaderboard every this many ticks (a minute). */
const LEADERBOARD_EVERY = 60;
/** The directory's cooldown: each up's reminder falls due this long after it. */
const COOLDOWN_MS = 60_000;
/** The stand-in lets go of the bot's messages this old: an up edits its reminder well within it. */
const KEEP_MESSAGES_MS = 5 * 60_000;
/** What each gateway session of the stand-in keeps for a RESUME (none is made here). */
const SESSION_REPLAY_MAX = 1_000;
/** A reminder due this long before the end must have been posted. */
const REMINDER_GRACE_MS = 15_000;
/** A command's answer. */
const ANSWER_MS = 30_000;
/** The stand-ins let go of what they recorded this often. */
const TRIM_MS = 10_000;
const KEY = 'bench-soak-hook-key-4e1d';
/** The directory's limits, and the client's, out of the way (scenario 2's). */
const RAISED = { max: 10_000, windowMs: 1_000 };
const MANAGER = Permission.ManageGuild | Permission.UseApplicationCommands;
const MEMBER = Permission.UseApplicationCommands;
const CALLBACK_PATH = /^\/interactions\/\d+\/[^/]+\/callback$/;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return value;
}

/** An answer: the final edit or follow-up, or an immediate message (callback type 4). */
function isAnswer(r: RecordedRestRequest): boolean {
  if (isFinalAnswer(r)) return true;
  return (
    r.status < 300 &&
    r.method === 'POST' &&
    CALLBACK_PATH.test(r.path) &&
    (r.body as { type?: unknown } | undefined)?.type === 4
  );
}

interface Sample {
  /** Minutes since the load started. */
  minute: number;
  heapUsedMb: number;
  rssMb: number;
  /** Outside the heap: memory of C++ objects bound to JS, and of ArrayBuffers and Buffers among it. */
  externalMb: number;
  arrayBuffersMb: number;
  fds: number;
  loopP99Ms: number;
  loopMaxMs: number;
  storeMb: number;
  /** Channel messages the stand-in keeps (posted by the bot), so far. */
  standInMessages: number;
  /** Done in the period: commands answered, failed; deliveries stored, failed. */
  answered: number;
  failed: number;
  delivered: number;
  deliveryFailed: number;
}

interface Counts {
  sent: number;
  answered: number;
  failed: number;
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return Number.NaN;
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Slope per 10 minutes of `value` over `samples` (x in minutes). */
function slopePer10(samples: readonly Sample[], value: (s: Sample) => number): number {
  return linearFit(samples.map((s) => ({ x: s.minute, y: value(s) }))).slope * 10;
}

export async function soakScenario(): Promise<ScenarioResult> {
  const quick = isQuick();
  const minutes = envNumber('SOAK_MINUTES', quick ? 2 : 30);
  const sampleMs = envNumber('SOAK_SAMPLE_MS', quick ? 15_000 : 60_000);
  const durationMs = minutes * 60_000;
  const warmUpMin = minutes < 15 ? minutes / 3 : 5;
  const gc = (globalThis as { gc?: () => void }).gc;

  const guilds = makeGuilds(SERVERS, { channels: ['reminders', 'directory-events'] });
  const reminderChannel = (g: GuildFixture): string => (g.channels[0] as { id: string }).id;
  const eventsChannel = (g: GuildFixture): string => (g.channels[1] as { id: string }).id;
  const reminderChannels = new Map(guilds.map((g) => [reminderChannel(g), g.id]));
  const hooked = guilds.slice(0, WEBHOOK_SERVERS);

  const rig = await startBotRig({
    guilds,
    emulator: { rateLimits: { global: RAISED, routes: RAISED }, cooldownMs: COOLDOWN_MS },
    env: {
      DIRECTORY_RATE_LIMIT: `${RAISED.max}/${RAISED.windowMs}`,
      DIRECTORY_ROUTE_RATE_LIMIT: `${RAISED.max}/${RAISED.windowMs}`,
      WEBHOOK_PORT: '0',
      WEBHOOK_HOST: '127.0.0.1',
      PUBLIC_URL: 'https://bot.example.test/',
      WEBHOOK_RATE_LIMIT: '100000/1000',
      LOG_LEVEL: 'warn',
    },
    // The stand-in keeps what a RESUME would replay; the soak has none to make, and 50,000
    // interactions kept would be the stand-in's growth in the bot's numbers.
    sessionReplayMax: SESSION_REPLAY_MAX,
  });
  const { discord, emu, bot } = rig;
  const storeFile = bot.store.location;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const finished: string[] = [];
  const inFlight = new Set<Promise<void>>();
  const counts: Record<string, Counts> = {};
  const failures: Record<string, number> = {};
  /** Per server: when each answered /up was sent (Date.now()). */
  const upsAnswered = new Map<string, number[]>();
  const samples: Sample[] = [];
  let period = { answered: 0, failed: 0, delivered: 0, deliveryFailed: 0 };
  const deliveries = { sent: 0, stored: 0, failed: 0 };
  let pool: Pool | undefined;
  let ticker: NodeJS.Timeout | undefined;
  let trimmer: NodeJS.Timeout | undefined;
  let setupMs = 0;
  let loadMs = 0;
  let loadFrom = 0;
  let endedAt = 0;
  let tooMany = Number.NaN;
  let standIn = { messages: 0, reminders: 0, kb: 0 };
  let remindersDue = 0;
  let remindersMissing = 0;

  /** Reminder posts and stand-in messages let go by the trim, counted before they go. */
  const forgotten = { messages: 0, bytes: 0, reminders: new Map<string, number>() };
  const trim = (): void => {
    discord.forget(finished.splice(0));
    // The messages the bot posted, once past the time an up may still edit its reminder.
    for (const m of discord.forgetMessagesBefore(Date.now() - KEEP_MESSAGES_MS)) {
      forgotten.messages += 1;
      forgotten.bytes += Buffer.byteLength(JSON.stringify(m));
      const guildId = reminderChannels.get(m.channelId);
      if (guildId !== undefined && m.receivedAt >= loadFrom)
        forgotten.reminders.set(guildId, (forgotten.reminders.get(guildId) ?? 0) + 1);
    }
    discord.requests.length = 0;
    discord.gatewayLog.length = 0;
    emu.requests.length = 0;
  };

  /** Sends a command; counts its answer (or its failure) under `kind`. */
  const command = (
    kind: string,
    options: Parameters<typeof discord.sendCommand>[0],
    onAnswer?: () => void,
  ): Promise<boolean> => {
    const c = counts[kind] ?? { sent: 0, answered: 0, failed: 0 };
    counts[kind] = c;
    c.sent++;
    let handle: InteractionHandle;
    try {
      handle = discord.sendCommand(options);
    } catch (err) {
      c.failed++;
      period.failed++;
      const why = `${kind}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 120);
      failures[why] = (failures[why] ?? 0) + 1;
      return Promise.resolve(false);
    }
    const done = handle.waitFor(isAnswer, ANSWER_MS).then(
      () => {
        c.answered++;
        period.answered++;
        onAnswer?.();
        return true;
      },
      () => {
        c.failed++;
        period.failed++;
        const why = `${kind}: no answer within ${ANSWER_MS / 1000} s`;
        failures[why] = (failures[why] ?? 0) + 1;
        return false;
      },
    );
    const tracked = done.then(() => {
      finished.push(handle.id);
    });
    inFlight.add(tracked);
    void tracked.finally(() => inFlight.delete(tracked));
    return done;
  };

  const settings = (g: GuildFixture, sub: string, options: CommandOption[]): Promise<boolean> =>
    command(`setup /settings ${sub}`, {
      guildId: g.id,
      name: 'settings',
      options: [commandOption.subcommand(sub, options)],
      permissions: MANAGER,
      user: { id: snowflake(), username: 'soak_manager' },
    });

  const deliver = async (i: number): Promise<void> => {
    const g = hooked[i % hooked.length] as GuildFixture;
    deliveries.sent++;
    try {
      const res = await (pool as Pool).request({
        method: 'POST',
        path: `/hooks/directory/${g.id}`,
        headers: { 'content-type': 'application/json', 'x-hook-key': KEY },
        body: JSON.stringify({
          type: 'new_server_comment',
          data: {
            user: '310000000000000001',
            comment: { vote: { old: null, new: 1 }, old: null, new: `Комментарий №${i}: отличный сервер!` },
            at: Date.now(),
          },
        }),
      });
      await res.body.dump();
      if (res.statusCode === 200) {
        deliveries.stored++;
        period.delivered++;
      } else {
        throw new Error(`status ${res.statusCode}`);
      }
    } catch (err) {
      deliveries.failed++;
      period.deliveryFailed++;
      const why = `delivery: ${err instanceof Error ? err.message : String(err)}`.slice(0, 120);
      failures[why] = (failures[why] ?? 0) + 1;
    }
  };

  const LOOKUPS: Array<{ kind: string; name: string; options?: CommandOption[] }> = [
    { kind: '/bot', name: 'bot', options: [commandOption.string('ref', 'kerdoku')] },
    { kind: '/server', name: 'server', options: [commandOption.string('ref', 'boticord')] },
    { kind: '/profile', name: 'profile' },
  ];

  const tick = (n: number): void => {
    const g = guilds[Math.floor(n / 2) % SERVERS] as GuildFixture;
    const user = { id: snowflake(), username: `soak_${n}` };
    if (n % 2 === 0) {
      const sentAt = Date.now();
      void command('/up', { guildId: g.id, name: 'up', permissions: MEMBER, user }, () => {
        const list = upsAnswered.get(g.id) ?? [];
        list.push(sentAt);
        upsAnswered.set(g.id, list);
      });
    } else {
      const lookUp = LOOKUPS[Math.floor(n / 2) % LOOKUPS.length] as (typeof LOOKUPS)[number];
      void command(lookUp.kind, {
        guildId: g.id,
        name: lookUp.name,
        permissions: MEMBER,
        user,
        ...(lookUp.options ? { options: lookUp.options } : {}),
      });
    }
    if (n % DELIVERY_EVERY === 0) {
      const delivery = deliver(n / DELIVERY_EVERY);
      inFlight.add(delivery);
      void delivery.finally(() => inFlight.delete(delivery));
    }
    if (n % LEADERBOARD_EVERY === LEADERBOARD_EVERY - 1) {
      void command('/leaderboard', { guildId: g.id, name: 'leaderboard', permissions: MEMBER, user });
    }
  };

  const sample = (minute: number): Sample => {
    gc?.();
    gc?.();
    const mem = process.memoryUsage();
    const s: Sample = {
      minute,
      heapUsedMb: mem.heapUsed / MB,
      rssMb: mem.rss / MB,
      externalMb: mem.external / MB,
      arrayBuffersMb: mem.arrayBuffers / MB,
      fds: openFds(),
      loopP99Ms: loop.percentile(99) / 1e6,
      loopMaxMs: loop.max / 1e6,
      storeMb: (fileSize(storeFile) + fileSize(`${storeFile}-wal`)) / MB,
      standInMessages: discord.postedMessages().length,
      ...period,
    };
    loop.reset();
    period = { answered: 0, failed: 0, delivered: 0, deliveryFailed: 0 };
    return s;
  };

  try {
    // Setup: reminders on in every server, webhooks in ten (5 commands at a time).
    const setupFrom = performance.now();
    for (let i = 0; i < SERVERS; i += 5) {
      await Promise.all(
        guilds
          .slice(i, i + 5)
          .map((g) => settings(g, 'reminders', [commandOption.channel('channel', reminderChannel(g))])),
      );
    }
    for (const g of hooked) {
      if (
        await settings(g, 'webhook', [
          commandOption.string('key', KEY),
          commandOption.channel('channel', eventsChannel(g)),
        ])
      )
        continue;
      throw new Error(`/settings webhook was not answered in ${g.id}`);
    }
    const setupFailed = Object.entries(counts).reduce((n, [, c]) => n + c.failed, 0);
    if (setupFailed > 0) throw new Error(`setup: ${setupFailed} /settings not answered`);
    setupMs = performance.now() - setupFrom;
    pool = new Pool(`http://127.0.0.1:${bot.webhookPort()}`, { connections: 2, pipelining: 1 });
    trim();

    // The load, and a sample every period.
    const started = performance.now();
    loadFrom = Date.now();
    let n = 0;
    tick(n++);
    ticker = setInterval(() => tick(n++), TICK_MS);
    trimmer = setInterval(trim, TRIM_MS);
    loop.enable();
    const minuteNow = () => (performance.now() - started) / 60_000;
    samples.push(sample(0));
    for (let k = 1; k * sampleMs <= durationMs; k++) {
      const wait = started + k * sampleMs - performance.now();
      if (wait > 0) await sleep(wait);
      const s = sample(minuteNow());
      samples.push(s);
      process.stderr.write(
        `[soak ${s.minute.toFixed(1)}/${minutes} min] rss ${s.rssMb.toFixed(1)} MB, heap ${s.heapUsedMb.toFixed(1)} MB, ` +
          `external ${s.externalMb.toFixed(1)} MB, ` +
          `fds ${s.fds}, loop p99 ${s.loopP99Ms.toFixed(1)} ms, store ${s.storeMb.toFixed(2)} MB, ` +
          `answered ${s.answered} (failed ${s.failed}), delivered ${s.delivered} (failed ${s.deliveryFailed})\n`,
      );
    }
    clearInterval(ticker);
    ticker = undefined;
    loadMs = performance.now() - started;
    endedAt = Date.now();
    // What is still on its way (bounded by ANSWER_MS).
    await Promise.all([...inFlight]);
    loop.disable();
    clearInterval(trimmer);
    trimmer = undefined;
    tooMany = discord.globalRateLimited();

    // Reminders: each answered up's reminder due before the end (less a grace) posted.
    const posted = new Map<string, number>(forgotten.reminders);
    const all = discord.postedMessages();
    for (const m of all) {
      // The reminders of the load (the setup's confirmation in the channel comes before it).
      if (m.receivedAt < loadFrom) continue;
      const guildId = reminderChannels.get(m.channelId);
      if (guildId !== undefined) posted.set(guildId, (posted.get(guildId) ?? 0) + 1);
    }
    for (const [guildId, sent] of upsAnswered) {
      const due = sent.filter((at) => at + COOLDOWN_MS + REMINDER_GRACE_MS <= endedAt).length;
      remindersDue += due;
      remindersMissing += Math.max(0, due - (posted.get(guildId) ?? 0));
    }
    standIn = {
      messages: forgotten.messages + all.length,
      reminders: [...posted.values()].reduce((a, b) => a + b, 0),
      kb: (forgotten.bytes + Buffer.byteLength(JSON.stringify(all))) / 1024,
    };
  } finally {
    if (ticker) clearInterval(ticker);
    if (trimmer) clearInterval(trimmer);
    loop.disable();
    await pool?.close();
    await rig.close();
  }

  // The verdicts, after the warm-up.
  const settled = samples.filter((s) => s.minute >= warmUpMin - 1e-6);
  const warm = samples.filter((s) => s.minute <= warmUpMin + 1e-6);
  const lastThird = samples.filter((s) => s.minute >= (minutes * 2) / 3 - 1e-6);
  const rssSlope = slopePer10(settled, (s) => s.rssMb);
  const heapSlope = slopePer10(settled, (s) => s.heapUsedMb);
  const fdSlope = slopePer10(settled, (s) => s.fds);
  const storeSlope = slopePer10(settled, (s) => s.storeMb);
  const messagesSlope = slopePer10(settled, (s) => s.standInMessages);
  const warmFdMax = Math.max(...warm.map((s) => s.fds));
  const lastFdMax = Math.max(...lastThird.map((s) => s.fds));
  // The loop's p99 over the periods after the warm-up (the first sample, at 0, has no period).
  const periods = settled.filter((s) => s.minute > 0);
  const half = Math.floor(periods.length / 2);
  const loopFirst = median(periods.slice(0, half).map((s) => s.loopP99Ms));
  const loopSecond = median(periods.slice(periods.length - half).map((s) => s.loopP99Ms));
  const commands = Object.entries(counts).filter(([kind]) => !kind.startsWith('setup'));
  const sent = commands.reduce((n, [, c]) => n + c.sent, 0);
  const failed = commands.reduce((n, [, c]) => n + c.failed, 0);
  const perKind = commands.map(([kind, c]) => `${kind} ${c.answered}/${c.sent}`).join(', ');
  const gcNote = gc ? 'global.gc twice before each sample' : 'no global.gc (run node with --expose-gc)';
  const window = `after the first ${warmUpMin.toFixed(1)} min, ${settled.length} samples`;
  const perBytes = standIn.messages > 0 ? (standIn.kb * 1024) / standIn.messages : 0;
  const standInMbPer10 = (messagesSlope * perBytes) / MB;
  const f = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : '—');

  const rows: Row[] = [
    {
      scenario: SCENARIO,
      metric: `RSS slope (${window})`,
      unit: 'MB/10 min',
      ours: rssSlope,
      target: '≤ 1 MB/10 min',
      verdict: settled.length < 2 ? 'FAIL' : atMost(rssSlope, 1),
      note:
        `least squares over the samples after the warm-up; ${gcNote}; RSS ${f(samples[0]?.rssMb ?? Number.NaN, 1)} MB at the start, ` +
        `${f(samples.at(-1)?.rssMb ?? Number.NaN, 1)} MB at the end; the stand-ins share the process: the channel ` +
        `messages the Discord stand-in keeps grew ${f(messagesSlope, 0)} per 10 min (about ${f(standInMbPer10)} MB/10 min as JSON); ` +
        `per sample (MB): ${samples.map((s) => f(s.rssMb, 0)).join(' ')}`,
    },
    {
      scenario: SCENARIO,
      metric: 'heap used slope',
      unit: 'MB/10 min',
      ours: heapSlope,
      verdict: 'info',
      note:
        `this process's heap (the bot's, the stand-ins' and the bench's; not the worker threads'): ` +
        `per sample (MB): ${samples.map((s) => f(s.heapUsedMb, 1)).join(' ')}`,
    },
    {
      scenario: SCENARIO,
      metric: 'open file descriptors: last third max vs warm-up max',
      unit: '',
      ours: lastFdMax,
      baseline: warmFdMax,
      target: '≤ warm-up max',
      verdict: Number.isFinite(lastFdMax) ? atMost(lastFdMax, warmFdMax) : 'FAIL',
      note: `/proc/self/fd of this process (the bot, the stand-ins and the bench); slope ${f(fdSlope)} per 10 min; per sample: ${samples.map((s) => s.fds).join(' ')}`,
    },
    {
      scenario: SCENARIO,
      metric: 'event-loop delay p99: second half vs first half (median of the periods)',
      unit: 'ms',
      ours: loopSecond,
      baseline: loopFirst,
      ratio: loopSecond / loopFirst,
      target: '≤ 1.5x',
      verdict: half < 1 ? 'FAIL' : atMost(loopSecond / loopFirst, 1.5),
      note: `monitorEventLoopDelay (10 ms resolution), reset each sample; per period: ${periods.map((s) => f(s.loopP99Ms, 1)).join(' ')}`,
    },
    {
      scenario: SCENARIO,
      metric: 'store size slope (SQLite file + WAL)',
      unit: 'MB/10 min',
      ours: storeSlope,
      verdict: 'info',
      note: `${f(samples[0]?.storeMb ?? Number.NaN)} MB at the start, ${f(samples.at(-1)?.storeMb ?? Number.NaN)} MB at the end (the history of the ups grows with them)`,
    },
    {
      scenario: SCENARIO,
      metric: `commands not answered within ${ANSWER_MS / 1000} s (of ${sent})`,
      unit: '',
      ours: failed,
      target: '0',
      verdict: atMost(failed, 0),
      note: `${perKind}${Object.keys(failures).length > 0 ? `; failures: ${JSON.stringify(failures)}` : ''}`,
    },
    {
      scenario: SCENARIO,
      metric: `webhook deliveries not stored (of ${deliveries.sent})`,
      unit: '',
      ours: deliveries.failed,
      target: '0',
      verdict: atMost(deliveries.failed, 0),
      note: `a comment every ${(DELIVERY_EVERY * TICK_MS) / 1000} s to ${WEBHOOK_SERVERS} servers; ${deliveries.stored} answered 200`,
    },
    {
      scenario: SCENARIO,
      metric: `reminders due not posted (of ${remindersDue})`,
      unit: '',
      ours: remindersMissing,
      target: '0',
      verdict: atMost(remindersMissing, 0),
      note: `each accepted /up's reminder ${COOLDOWN_MS / 1000} s later; due ${REMINDER_GRACE_MS / 1000} s before the end or earlier; ${standIn.reminders} reminders posted during the load`,
    },
    discordTooManyRow(SCENARIO, tooMany),
  ];
  return {
    rows,
    data: {
      minutes,
      sampleMs,
      warmUpMin,
      gc: gc !== undefined,
      servers: SERVERS,
      webhookServers: WEBHOOK_SERVERS,
      tickMs: TICK_MS,
      cooldownMs: COOLDOWN_MS,
      setupMs: Math.round(setupMs),
      loadMs: Math.round(loadMs),
      slopesPer10Min: {
        rssMb: rssSlope,
        heapUsedMb: heapSlope,
        externalMb: slopePer10(settled, (s) => s.externalMb),
        fds: fdSlope,
        storeMb: storeSlope,
        standInMessages: messagesSlope,
      },
      fds: { warmUpMax: warmFdMax, lastThirdMax: lastFdMax },
      loopP99Ms: { firstHalfMedian: loopFirst, secondHalfMedian: loopSecond },
      counts,
      deliveries,
      failures,
      reminders: { due: remindersDue, missing: remindersMissing, posted: standIn.reminders },
      standIn,
      discordTooMany: tooMany,
      samples,
    },
  };
}

/**
 * Scenario 16: a burst of v3 notifications (issue 37; only when named: BENCH_ONLY=16).
 *
 * 1,000 `up_added` a second for 10 s, sent by the emulator's gateway (`emu.v3.notify`, in 10 ms
 * slices of 10, each with `happened` = its send time) to the bot's one WebSocket, through the real
 * parts in this process: NotificationsService (lease undefined: one process), the real
 * notificationIntake over a WebhookRepository on a fresh SQLite store, the real WebhookAnnouncer
 * woken by the intake, and the real DirectoryEventHandler over real repositories (history,
 * reminders, settings, comments, up watches; v3's cadence). No server has a thanks line: the REST
 * given to the handler throws if it is ever called, and the calls are counted.
 *
 * Each event is about a server of its own (10,000 copies of a seeded server, owned by the account of
 * `V3_KEYS.owner`, added to the emulator's state): an up 1 s after another of the same server moves
 * nothing (the reminder is already within SAME_UP_MS of it), so only a first up per server has a
 * reminder to measure. Measured per event: the time the intake's transaction that stored it and
 * restarted its server's reminder (NotificationInbox.storeAll, wrapped) committed with next_up_at =
 * happened + 24 h, minus happened; also the time the announcer's handler returned (the history, the
 * rest of what follows an up). Then the store is read: webhook_events rows (all done), up_history rows (distinct ids),
 * reminders at happened + 24 h. Heap and RSS sampled every second; the client's pauses and resumes
 * (ws's WebSocket.prototype.pause/resume wrapped here) and the deepest queue (frames read but not
 * yet stored). The emulator's list of the events sent (`emu.v3.notifications`) is emptied each
 * second; its private replay buffer (each frame's text, about 2 MB for 10,000) is not reachable and
 * stays in the figures: the sampled heap is the bot's and that.
 *
 * Overrides for a quick check or a tuning run (never a published result): BENCH_NOTIFY_RATE (per
 * second), BENCH_NOTIFY_SECONDS, BENCH_NOTIFY_CONCURRENCY and BENCH_NOTIFY_BATCH (the announcer's;
 * default its own, 8 and 200), BENCH_NOTIFY_DRAIN_S (how long to wait after the burst, default 180),
 * BENCH_NOTIFY_PROFILE=1 (each SQLite statement timed by its text, in the JSON: where the time goes),
 * BENCH_NOTIFY_YIELD=1 (a diagnostic: the scenario's wrapper of the handler gives the event loop a
 * turn before each event; better-sqlite3 being synchronous, the announcer's chain of promises
 * otherwise runs for seconds without one, and the socket is not read meanwhile).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { REST } from 'discord.js';
import WebSocket from 'ws';
import { NotificationsService } from '../../src/features/notifications/connection.js';
import { notificationIntake } from '../../src/features/notifications/intake.js';
import { V3_UP_EVERY_MS } from '../../src/features/up/follows.js';
import { WebhookAnnouncer } from '../../src/features/webhooks/announcer.js';
import { DirectoryEventHandler } from '../../src/features/webhooks/handle.js';
import { createLogger } from '../../src/log/logger.js';
import {
  CommentPostRepository,
  HistoryRepository,
  NotificationInbox,
  openStore,
  ReminderRepository,
  SettingsRepository,
  UpWatchRepository,
  WebhookRepository,
} from '../../src/store/index.js';
import type { StatementKind } from '../../src/store/query-timing.js';
import { startEmulator, V3_KEY_OWNERS, V3_KEYS } from '../../test/emulator/index.js';
import { isQuick } from '../lib/env.js';
import { atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { MB, sleep, summarize } from '../lib/stats.js';

const SCENARIO = '16. v3 notifications burst';
const SLICE_MS = 10;
const TARGET_P99_MS = 1_000;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a number above 0`);
  return n;
}

function optionalNumber(name: string): number | undefined {
  return process.env[name] ? envNumber(name, 1) : undefined;
}

interface Sample {
  t: number;
  heapMb: number;
  rssMb: number;
}

function memory(t: number): Sample {
  const m = process.memoryUsage();
  return { t, heapMb: m.heapUsed / MB, rssMb: m.rss / MB };
}

/** Two full collections when the process has --expose-gc, after a pause. */
async function settled(t: number): Promise<Sample & { collected: boolean }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  await sleep(100);
  gc?.();
  gc?.();
  return { ...memory(t), collected: gc !== undefined };
}

interface StatementTime {
  count: number;
  ms: number;
}

/**
 * BENCH_NOTIFY_PROFILE=1: the time of each SQLite statement, by its text (better-sqlite3 runs them
 * synchronously: this is the event loop's time in SQLite), from Statement.prototype.run/all wrapped.
 */
async function timeStatements(): Promise<{ times: Map<string, StatementTime>; restore: () => void }> {
  const Sqlite = (await import('better-sqlite3')).default;
  const probe = new Sqlite(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1')) as {
    run: (...args: unknown[]) => unknown;
    all: (...args: unknown[]) => unknown;
  };
  probe.close();
  const { run, all } = proto;
  const times = new Map<string, StatementTime>();
  const timed = (original: (...args: unknown[]) => unknown) =>
    function (this: { source: string }, ...args: unknown[]) {
      const t = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const key = this.source.replace(/\s+/g, ' ').slice(0, 110);
        const entry = times.get(key) ?? { count: 0, ms: 0 };
        entry.count += 1;
        entry.ms += performance.now() - t;
        times.set(key, entry);
      }
    };
  proto.run = timed(run);
  proto.all = timed(all);
  return {
    times,
    restore: () => {
      proto.run = run;
      proto.all = all;
    },
  };
}

/** Counts ws's pause() and resume() calls (the client's; the emulator's sockets never pause). */
function countPauses(): { paused: number; resumed: number; restore: () => void } {
  const proto = WebSocket.prototype as unknown as { pause: () => void; resume: () => void };
  const { pause, resume } = proto;
  const counts = {
    paused: 0,
    resumed: 0,
    restore: () => {
      proto.pause = pause;
      proto.resume = resume;
    },
  };
  proto.pause = function (this: unknown) {
    counts.paused += 1;
    pause.call(this);
  };
  proto.resume = function (this: unknown) {
    counts.resumed += 1;
    resume.call(this);
  };
  return counts;
}

export async function notificationsScenario(): Promise<ScenarioResult> {
  const rate = Math.round(envNumber('BENCH_NOTIFY_RATE', 1_000));
  const seconds = Math.round(envNumber('BENCH_NOTIFY_SECONDS', isQuick() ? 2 : 10));
  const drainMs = envNumber('BENCH_NOTIFY_DRAIN_S', 180) * 1_000;
  const concurrency = optionalNumber('BENCH_NOTIFY_CONCURRENCY');
  const batch = optionalNumber('BENCH_NOTIFY_BATCH');
  const total = rate * seconds;
  const profile = process.env.BENCH_NOTIFY_PROFILE === '1';
  const yieldEach = process.env.BENCH_NOTIFY_YIELD === '1';
  const perSlice = (rate * SLICE_MS) / 1_000;
  if (!Number.isInteger(perSlice)) throw new Error('BENCH_NOTIFY_RATE must be a multiple of 100');
  const slices = total / perSlice;

  const dir = mkdtempSync(join(tmpdir(), 'bench-notify-'));
  const statements: Record<StatementKind, number> = { select: 0, insert: 0, update: 0, delete: 0, other: 0 };
  let statementMs = 0;
  const store = await openStore({
    dataDir: dir,
    onQuery: (e) => {
      statements[e.statement] += 1;
      statementMs += e.durationMs;
    },
  });
  const emu = await startEmulator();
  const pauses = countPauses();
  const sqlite = profile ? await timeStatements() : undefined;
  const logger = createLogger({ level: 'silent' });

  // The servers: copies of a seeded one, owned by the account of the bot's key.
  const account = V3_KEY_OWNERS.owner;
  const template = [...emu.state.servers.values()][0];
  if (!template) throw new Error('the emulator has no seeded server to copy');
  const guilds = Array.from({ length: total }, (_, i) => `96${String(i).padStart(16, '0')}`);
  for (const id of guilds) {
    const copy = structuredClone(template);
    copy.id = id;
    copy.shortCode = null;
    copy.information.owner = account;
    emu.state.servers.set(id, copy);
  }

  // guild -> happened (set at send); the times the reminder was scheduled and the handler returned.
  const happenedOf = new Map<string, number>();
  // guild -> when its slice was due (t0 + its 10 ms): what a directory sending on its own clock would stamp.
  const plannedOf = new Map<string, number>();
  const plannedLag: number[] = [];
  const scheduledLag: number[] = [];
  const handledLag: number[] = [];
  const storedLag: number[] = [];
  let scheduledOther = 0;
  let restCalls = 0;
  let wakes = 0;
  let allScheduled: () => void = () => undefined;
  const everyScheduled = new Promise<void>((resolve) => {
    allScheduled = resolve;
  });

  const reminders = new ReminderRepository(store);
  const scheduleGuild = reminders.scheduleGuild.bind(reminders);
  reminders.scheduleGuild = async (guildId, times, now) => {
    const outcome = await scheduleGuild(guildId, times, now);
    const happened = happenedOf.get(guildId);
    if (outcome === 'scheduled' && happened !== undefined && times.nextUpAt === happened + V3_UP_EVERY_MS) {
      const done = Date.now();
      scheduledLag.push(done - happened);
      plannedLag.push(done - (plannedOf.get(guildId) ?? happened));
      if (scheduledLag.length === total) allScheduled();
    } else {
      scheduledOther += 1;
    }
    return outcome;
  };
  // Any use of Discord's REST is a call it should not have made: counted, and it fails.
  const rest = new Proxy(
    {},
    {
      get(_target, prop) {
        if (prop === 'then') return undefined;
        return () => {
          restCalls += 1;
          throw new Error(`REST.${String(prop)} called`);
        };
      },
    },
  ) as REST;
  const webhooks = new WebhookRepository(store);
  const handler = new DirectoryEventHandler({
    rest,
    webhooks,
    settings: new SettingsRepository(store),
    history: new HistoryRepository(store),
    reminders,
    wakeReminders: () => {
      wakes += 1;
    },
    comments: new CommentPostRepository(store),
    watches: new UpWatchRepository(store),
    cadenceMs: V3_UP_EVERY_MS,
    guild: () => undefined,
    logger,
  });
  const outcomes = new Map<string, number>();
  const announcer = new WebhookAnnouncer({
    webhooks,
    owner: `bench-16-${process.pid}`,
    logger,
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(batch === undefined ? {} : { batch }),
    handler: {
      async handle(event, claim) {
        // BENCH_NOTIFY_YIELD=1: a turn of the event loop before each event (a diagnostic, not the bot).
        if (yieldEach) await nextTurn();
        const outcome = await handler.handle(event, claim);
        const happened = Number(event.id.slice(event.id.lastIndexOf(':') + 1));
        handledLag.push(Date.now() - happened);
        outcomes.set(outcome.kind, (outcomes.get(outcome.kind) ?? 0) + 1);
        return outcome;
      },
    },
  });

  let framesRead = 0;
  let taken = 0;
  let deepest = 0;
  const intakeOutcomes = new Map<string, number>();
  // The intake as the bot builds it (app/services.ts): a batch of events in one transaction, each
  // up's reminder restarted in it; the time that transaction committed is when the reminder was
  // scheduled (its next_up_at checked to be happened + 24 h).
  const inbox = new NotificationInbox(store);
  const storeAll = inbox.storeAll.bind(inbox);
  inbox.storeAll = async (events, receivedAt) => {
    const outcomes = await storeAll(events, receivedAt);
    const done = Date.now();
    for (const [i, item] of events.entries()) {
      const happened = happenedOf.get(item.guildId);
      const restarted = outcomes[i]?.restarted;
      if (happened !== undefined && restarted?.nextUpAt === happened + V3_UP_EVERY_MS) {
        scheduledLag.push(done - happened);
        plannedLag.push(done - (plannedOf.get(item.guildId) ?? happened));
        if (scheduledLag.length === total) allScheduled();
      } else {
        scheduledOther += 1;
      }
    }
    return outcomes;
  };
  const intake = notificationIntake({
    webhooks,
    inbox,
    cadenceMs: V3_UP_EVERY_MS,
    botId: '1300000000000000016',
    now: Date.now,
    onStored: () => announcer.wake(),
    onOutcome: (_type, _via, outcome) => intakeOutcomes.set(outcome, (intakeOutcomes.get(outcome) ?? 0) + 1),
  });
  // The connection's states, with the time since the start: a reconnect loses what was unread.
  const began = performance.now();
  const states: string[] = [];
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const service = new NotificationsService({
    url: emu.v3.notifyUrl,
    key: V3_KEYS.owner,
    intake: {
      take: (event, via) => intake.take(event, via),
      async takeAll(events) {
        try {
          return await intake.takeAll(events);
        } finally {
          taken += events.length;
          const done = Date.now();
          for (const event of events) storedLag.push(done - event.happened);
        }
      },
    },
    lease: undefined,
    logger,
    onState: (state) => {
      states.push(`${((performance.now() - began) / 1000).toFixed(1)}s ${state}`);
      if (state === 'ready') ready();
    },
    client: {
      onFrame: (kind) => {
        if (kind !== 'notify') return;
        framesRead += 1;
        deepest = Math.max(deepest, framesRead - taken);
      },
    },
  });

  const samples: Sample[] = [];
  let sampler: NodeJS.Timeout | undefined;
  try {
    announcer.start();
    service.start();
    await isReady;
    const start = await settled(0);
    const t0 = performance.now();
    const epoch0 = Date.now();
    const cpu0 = process.cpuUsage();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    samples.push(memory(0));
    sampler = setInterval(() => {
      samples.push(memory((performance.now() - t0) / 1000));
      // The emulator's list of every event it sent: not the bot's memory (its replay buffer stays).
      emu.v3.notifications.length = 0;
    }, 1_000);

    // The burst: `perSlice` events every 10 ms, each with happened = its send time.
    let sent = 0;
    let lateSlices = 0;
    for (let s = 0; s < slices; s++) {
      const wait = t0 + s * SLICE_MS - performance.now();
      if (wait > 1) await sleep(wait);
      else if (wait < -SLICE_MS) lateSlices += 1;
      for (let k = 0; k < perSlice; k++) {
        const guildId = guilds[sent] as string;
        const happened = Date.now();
        happenedOf.set(guildId, happened);
        plannedOf.set(guildId, epoch0 + s * SLICE_MS);
        emu.v3.notify({
          type: 'up_added',
          affected: guildId,
          user: `31${String(sent % 5_000).padStart(16, '0')}`,
          payload: { upCount: 1 },
          happened,
        });
        sent += 1;
      }
    }
    const sendSeconds = (performance.now() - t0) / 1000;
    const drained = await Promise.race([everyScheduled.then(() => true), sleep(drainMs).then(() => false)]);
    // Then the announcer's backlog (the history, and the rest of what follows an up), within the same bound.
    const drainEnd = performance.now() + drainMs;
    while (handledLag.length < total && performance.now() < drainEnd) await sleep(100);
    const drainSeconds = (performance.now() - t0) / 1000 - sendSeconds;
    const cpu = process.cpuUsage(cpu0);
    loopDelay.disable();
    const loop = {
      p50Ms: loopDelay.percentile(50) / 1e6,
      p99Ms: loopDelay.percentile(99) / 1e6,
      maxMs: loopDelay.max / 1e6,
    };
    const cpuMsPerEvent = (cpu.user + cpu.system) / 1000 / Math.max(1, scheduledLag.length);
    clearInterval(sampler);
    sampler = undefined;
    samples.push(memory((performance.now() - t0) / 1000));
    const end = await settled((performance.now() - t0) / 1000);

    const counted = await store.run(async (db) => {
      const count = async (table: 'webhook_events' | 'up_history' | 'reminders', done?: boolean) => {
        let q = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
        if (done && table === 'webhook_events') q = q.where('state', '=', 'done');
        return Number((await q.executeTakeFirstOrThrow()).n);
      };
      const distinctUps = await db
        .selectFrom('up_history')
        .select((eb) => eb.fn.count<number>('id').distinct().as('n'))
        .where('source', '=', 'notify')
        .executeTakeFirstOrThrow();
      const rows = await db.selectFrom('reminders').select(['guild_id', 'next_up_at']).execute();
      const onCadence = rows.filter(
        (r) => Number(r.next_up_at) === (happenedOf.get(r.guild_id) ?? Number.NaN) + V3_UP_EVERY_MS,
      ).length;
      return {
        events: await count('webhook_events'),
        eventsDone: await count('webhook_events', true),
        ups: await count('up_history'),
        distinctUps: Number(distinctUps.n),
        reminders: await count('reminders'),
        onCadence,
      };
    });

    const lag = summarize(scheduledLag);
    const handled = summarize(handledLag);
    const stored = summarize(storedLag);
    const planned = summarize(plannedLag);
    const peak = {
      heapMb: Math.max(...samples.map((s) => s.heapMb)),
      rssMb: Math.max(...samples.map((s) => s.rssMb)),
    };
    const statementTotal = Object.values(statements).reduce((a, b) => a + b, 0);
    const onceEach =
      counted.events === total &&
      counted.eventsDone === total &&
      counted.ups === total &&
      counted.distinctUps === total &&
      counted.onCadence === total &&
      (intakeOutcomes.get('stored') ?? 0) === total;
    const tuning = `${yieldEach ? 'BENCH_NOTIFY_YIELD (a turn of the event loop before each event), ' : ''}announcer ${concurrency === undefined ? 'concurrency 8 (default)' : `concurrency ${concurrency}`}, ${batch === undefined ? 'batch 200 (default)' : `batch ${batch}`}`;
    const data = {
      rate,
      seconds,
      total,
      sent,
      sendSeconds,
      lateSlices,
      drained,
      drainSeconds,
      concurrency: concurrency ?? null,
      batch: batch ?? null,
      scheduledLagMs: lag,
      handledLagMs: handled,
      storedLagMs: stored,
      plannedLagMs: planned,
      cpuMsPerEvent,
      eventLoopDelay: loop,
      yieldEach,
      scheduledOther,
      counted,
      intakeOutcomes: Object.fromEntries(intakeOutcomes),
      handlerOutcomes: Object.fromEntries(outcomes),
      restCalls,
      wakes,
      socket: { paused: pauses.paused, resumed: pauses.resumed, deepestQueue: deepest, framesRead, states },
      statements,
      statementsPerEvent: statementTotal / Math.max(1, scheduledLag.length),
      statementMsPerEvent: statementMs / Math.max(1, scheduledLag.length),
      memory: { start, end, peak, samples },
      sqliteByStatement: sqlite
        ? [...sqlite.times]
            .sort((a, b) => b[1].ms - a[1].ms)
            .map(([sql, t]) => ({ sql, count: t.count, ms: Math.round(t.ms), msEach: t.ms / t.count }))
        : undefined,
    };
    const rows: Row[] = [
      {
        scenario: SCENARIO,
        metric: 'events stored and handled once each',
        unit: '',
        ours: counted.distinctUps,
        target: `${total.toLocaleString('en-US')}`,
        verdict: onceEach ? 'pass' : 'FAIL',
        note: `${sent} up_added sent over ${sendSeconds.toFixed(1)} s (${rate}/s in ${SLICE_MS} ms slices, ${lateSlices} slices late); webhook_events ${counted.events} (${counted.eventsDone} done), up_history ${counted.ups} (${counted.distinctUps} distinct, source notify), reminders at happened + 24 h ${counted.onCadence}; REST calls ${restCalls}; the connection's states ${states.map((x) => x.split(' ')[1]).join(' → ')}`,
      },
      {
        scenario: SCENARIO,
        metric: 'happened → reminder scheduled, p50',
        unit: 'ms',
        ours: lag.p50,
        verdict: 'info',
      },
      {
        scenario: SCENARIO,
        metric: 'happened → reminder scheduled, p99',
        unit: 'ms',
        ours: lag.p99,
        target: `≤ ${TARGET_P99_MS} ms`,
        verdict: lag.count === total ? atMost(lag.p99, TARGET_P99_MS) : 'FAIL',
        note: `${lag.count} of ${total} measured (${drained ? 'all' : `the rest not within ${drainMs / 1000} s of the burst's end`}); max ${lag.max.toFixed(0)} ms; ${tuning}; ${(statementTotal / Math.max(1, lag.count)).toFixed(1)} store statements and ${cpuMsPerEvent.toFixed(1)} ms of this process's CPU an event`,
      },
      {
        scenario: SCENARIO,
        metric: 'slice due → reminder scheduled, p99',
        unit: 'ms',
        ours: planned.p99,
        verdict: 'info',
        note: `p50 ${planned.p50.toFixed(0)} ms: from when the event's 10 ms slice was due (t0 + its offset), not its send: the sender shares the bot's event loop, and a slice it could not send on time is sent late with a later happened`,
      },
      {
        scenario: SCENARIO,
        metric: 'happened → stored (the intake), p99',
        unit: 'ms',
        ours: stored.p99,
        verdict: 'info',
        note: `p50 ${stored.p50.toFixed(0)} ms, max ${stored.max.toFixed(0)} ms: the time to the webhook_events row, before the announcer`,
      },
      {
        scenario: SCENARIO,
        metric: 'happened → all that follows the up done, p99',
        unit: 'ms',
        ours: handled.p99,
        verdict: 'info',
        note: `p50 ${handled.p50.toFixed(0)} ms, max ${handled.max.toFixed(0)} ms: the announcer's handler returned (the history, the reaction time, rewards, the /up follow-ups), one event at a time per server, ${handled.count} of ${total}; the burst's backlog drained ${drainSeconds.toFixed(1)} s after the last send`,
      },
      {
        scenario: SCENARIO,
        metric: 'peak heap during the burst',
        unit: 'MB',
        ours: peak.heapMb,
        verdict: 'info',
        note: `heap ${start.heapMb.toFixed(1)} MB before, ${end.heapMb.toFixed(1)} MB after (${start.collected ? 'collected' : 'not collected: run with --expose-gc'}); RSS ${start.rssMb.toFixed(0)} → peak ${peak.rssMb.toFixed(0)} → ${end.rssMb.toFixed(0)} MB; socket paused ${pauses.paused}×, deepest queue ${deepest}; the event loop's delay p99 ${loop.p99Ms.toFixed(0)} ms, max ${loop.maxMs.toFixed(0)} ms`,
      },
    ];
    return { rows, data };
  } finally {
    if (sampler) clearInterval(sampler);
    pauses.restore();
    sqlite?.restore();
    await service.stop();
    await announcer.stop();
    await emu.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Scenario 14's bot side, in a process of its own (as the bot's: the scenario's process holds the
 * Discord stand-in). A fresh SQLite store is filled with the servers of the job (their settings,
 * a digest channel each and a weekly period, a few members' ups in the week that ends; in bulk, as
 * weeks of /up would leave them), then each server's digest of that week (the row
 * `DigestRepository.schedule` writes, in bulk): the week ends at T0, a second after the store is
 * filled, and each digest is due at T0 plus its share of the spread (`spreadOf`, as `digestPlan`
 * gives it). The
 * bot's digest scheduler and sender (the classes `postEngines` builds, a real `ChartRenderer`)
 * then post them to the stand-in, through @discordjs/rest paced as the bot paces it
 * (`paceGlobally`, createDiscordClient's agent and multipart encoding), until every digest is
 * done. Prints one JSON line (DigestsSent).
 *
 *   node dist/bench/workers/digests-worker.js <file with a DigestsJob as JSON>
 */
import { readFileSync } from 'node:fs';
import { REST, type RESTOptions } from '@discordjs/rest';
import type { Insertable } from 'kysely';
import { spreadOf } from '../../src/features/digests/plan.js';
import { DigestScheduler, DigestSender } from '../../src/features/digests/send.js';
import { paceGlobally } from '../../src/gateway/global-pace.js';
import { createDiscordRestAgent, encodeFormsFirst } from '../../src/gateway/rest-agent.js';
import { createLogger } from '../../src/log/logger.js';
import { ChartRenderer } from '../../src/render/charts.js';
import { pendingColumns } from '../../src/store/claims.js';
import { DigestRepository } from '../../src/store/digests.js';
import { HistoryRepository, openStore, SettingsRepository } from '../../src/store/index.js';
import type { DigestsTable, GuildSettingsTable, UpHistoryTable } from '../../src/store/schema.js';
import { summarize } from '../lib/stats.js';

export interface DigestsJob {
  /** The stand-in's REST base, e.g. http://127.0.0.1:1234/api, and the bot's token there. */
  discordApi: string;
  token: string;
  dataDir: string;
  /** The servers, each with the text channel its digest goes to. */
  servers: Array<{ guildId: string; channelId: string }>;
  /** The share of the boundary each digest gets (DIGEST_SPREAD_MS in the full run). */
  spreadMs: number;
  /** How long the worker waits for every digest to be done, from T0. */
  boundMs: number;
}

export interface DigestsSent {
  /** The boundary: the end of the week of every digest (Date.now() clock). */
  t0: number;
  seedMs: number;
  upRows: number;
  /** Digests done as sent, failed, and tries left for later (the outbox's retries). */
  sent: number;
  failed: number;
  retried: number;
  /** The outbox's lateness (done after due, on this process's clock). */
  lateness: ReturnType<typeof summarize>;
  /** State counts of the digests of the week measured, once over. */
  states: Record<string, number>;
  /** The next week's digests written by the sender (one per server expected). */
  nextScheduled: number;
  charts: { rendered: number; failed: number; ms: ReturnType<typeof summarize> };
  /** The time from T0 to the last digest done, on this process's clock. */
  lastDoneMs: number;
  timedOut: boolean;
}

const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** The week measured: its key, apart from any calendar week the sender writes next. */
const KEY = 'bench-week';

/** A deterministic generator, so that every run draws the same servers. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function run(job: DigestsJob): Promise<DigestsSent> {
  const store = await openStore({ dataDir: job.dataDir });
  const settings = new SettingsRepository(store);
  const history = new HistoryRepository(store);
  const digests = new DigestRepository(store);

  // ---- the servers, their settings and their ups of the week, in bulk ----
  const seedStarted = performance.now();
  const started = Date.now();
  const draw = random(14);
  const CHUNK = 2_000;
  let upRows = 0;
  let ups: Insertable<UpHistoryTable>[] = [];
  const flush = async () => {
    const rows = ups;
    ups = [];
    if (rows.length > 0) await store.run((db) => db.insertInto('up_history').values(rows).execute());
  };
  for (let from = 0; from < job.servers.length; from += CHUNK) {
    const rows: Insertable<GuildSettingsTable>[] = job.servers
      .slice(from, from + CHUNK)
      .map(({ guildId, channelId }) => ({
        guild_id: guildId,
        reminder_channel_id: null,
        reminder_role_id: null,
        reminder_template: null,
        public_language: 'auto',
        problem: null,
        problem_at: null,
        updated_at: started,
        time_zone: 'UTC',
        thanks_template: null,
        reminder_early_ms: null,
        reminder_repeat_ms: null,
        reminder_repeat_times: null,
        digest_channel_id: channelId,
        digest_period: 'week',
        live_channel_id: null,
      }));
    await store.run((db) => db.insertInto('guild_settings').values(rows).execute());
  }
  for (const [i, { guildId }] of job.servers.entries()) {
    // 1 to 5 members, 1 to 20 ups each, within the six days before the store was filled.
    const members = 1 + Math.floor(draw() * 5);
    for (let m = 0; m < members; m++) {
      const userId = String(1_600_000_000_000_000_000n + BigInt(i * 8 + m));
      const count = 1 + Math.floor(draw() * 20);
      for (let n = 0; n < count; n++) {
        const at = started - 6 * DAY + Math.floor(draw() * (6 * DAY - 3_600_000));
        ups.push({
          id: `bench:${guildId}:${m}:${n}`,
          guild_id: guildId,
          user_id: userId,
          at,
          up_count: null,
          source: 'bot',
          possible_at: at - Math.floor(draw() * 120_000),
        });
        upRows++;
        if (ups.length >= CHUNK) await flush();
      }
    }
  }
  await flush();

  // ---- each server's digest of the week that ends at T0, due at T0 plus its share ----
  // The row DigestRepository.schedule writes, in bulk: one at a time, 10,000 took longer than the
  // lead before T0.
  const t0 = Date.now() + 1_000;
  for (let from = 0; from < job.servers.length; from += CHUNK) {
    const rows: Insertable<DigestsTable>[] = job.servers
      .slice(from, from + CHUNK)
      .map(({ guildId, channelId }) => ({
        id: `${guildId}:${KEY}`,
        guild_id: guildId,
        channel_id: channelId,
        period: 'week',
        period_start: t0 - WEEK,
        period_end: t0,
        time_zone: 'UTC',
        due_at: t0 + spreadOf(guildId, job.spreadMs),
        ...pendingColumns(),
      }));
    await store.run((db) => db.insertInto('digests').values(rows).execute());
  }
  const seedMs = performance.now() - seedStarted;
  if (Date.now() >= t0)
    throw new Error('the digests were written after their boundary: a longer lead needed');

  // ---- the bot's digests engine, as postEngines builds it ----
  const logger = createLogger({ level: 'warn' });
  const rest = new REST({
    api: job.discordApi,
    version: '10',
    agent: createDiscordRestAgent() as unknown as RESTOptions['agent'],
    makeRequest: encodeFormsFirst,
  }).setToken(job.token);
  paceGlobally(rest);
  const renderer = new ChartRenderer();
  const renderMs: number[] = [];
  let renderFailed = 0;
  const charts = {
    async render(request: Parameters<ChartRenderer['render']>[0]): Promise<Buffer> {
      const t = performance.now();
      try {
        const png = await renderer.render(request);
        renderMs.push(performance.now() - t);
        return png;
      } catch (err) {
        renderFailed++;
        throw err;
      }
    },
  };
  const lateness: number[] = [];
  let sent = 0;
  let failed = 0;
  let retried = 0;
  let lastDone = t0;
  let finished: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const scheduler = new DigestScheduler({
    owner: `bench:${process.pid}`,
    logger,
    digests,
    sender: new DigestSender({
      rest,
      settings,
      history,
      digests,
      charts,
      guild: (id) => ({ name: `Server ${id.slice(-6)}`, preferredLocale: 'en-US' }),
      logger,
    }),
    onDone: ({ latenessMs, outcome }) => {
      if (outcome.kind === 'retry') {
        retried++;
        return;
      }
      if (outcome.kind === 'sent') sent++;
      else failed++;
      lateness.push(latenessMs);
      lastDone = Date.now();
      if (sent + failed >= job.servers.length) finished();
    },
  });
  scheduler.start();
  let timedOut = false;
  const bound = setTimeout(
    () => {
      timedOut = true;
      finished();
    },
    Math.max(0, t0 + job.boundMs - Date.now()),
  );
  await allDone;
  clearTimeout(bound);
  await scheduler.stop();
  await renderer.close();

  const counts = await store.run((db) =>
    db
      .selectFrom('digests')
      .select(['state', 'period_end', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['state', 'period_end'])
      .execute(),
  );
  const states: Record<string, number> = {};
  let nextScheduled = 0;
  for (const row of counts) {
    if (Number(row.period_end) === t0) states[row.state] = (states[row.state] ?? 0) + Number(row.n);
    else nextScheduled += Number(row.n);
  }
  await store.close();
  return {
    t0,
    seedMs,
    upRows,
    sent,
    failed,
    retried,
    lateness: summarize(lateness),
    states,
    nextScheduled,
    charts: { rendered: renderMs.length, failed: renderFailed, ms: summarize(renderMs) },
    lastDoneMs: lastDone - t0,
    timedOut,
  };
}

const job = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as DigestsJob;
run(job).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

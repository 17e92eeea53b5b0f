/**
 * Scenario 6's processes, on one engine. `seed`: the store filled with 100,000 servers' settings
 * and scheduled reminders (in bulk, as months of /up would leave them), then the store's part of
 * 1,000 /up answers timed. `send`, in a fresh process as the bot's (measured from before the store
 * opens): the reminders due in one minute added, and the bot's reminder scheduler and sender (the
 * classes the bot builds, through @discordjs/rest) sending them to the scenario's Discord stand-in.
 * Each prints one JSON line.
 *
 *   node dist/bench/workers/reminders-worker.js seed '<RemindersJob as JSON>'
 *   node --expose-gc dist/bench/workers/reminders-worker.js send '<RemindersJob as JSON>'
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { REST } from '@discordjs/rest';
import type { Insertable } from 'kysely';
import { CommandMentions } from '../../src/discord/command-mentions.js';
import { ReminderScheduler } from '../../src/features/reminders/scheduler.js';
import { DiscordReminderSender } from '../../src/features/reminders/send.js';
import { createLogger } from '../../src/log/logger.js';
import {
  openStore,
  ReminderRepository,
  SettingsRepository,
  SQLITE_FILE_NAME,
  type StoreOptions,
  StoreUpJournal,
} from '../../src/store/index.js';
import { sql } from '../../src/store/kysely.js';
import { scheduledColumns } from '../../src/store/reminders.js';
import type { GuildSettingsTable, RemindersTable } from '../../src/store/schema.js';
import { settle } from '../lib/gc.js';
import { summarize } from '../lib/stats.js';

export interface RemindersJob {
  engine: 'sqlite' | 'postgres';
  store: StoreOptions;
  /** The stand-in's REST base, e.g. http://127.0.0.1:1234/api. */
  discordApi: string;
  applicationId: string;
  /** Reminders scheduled in all. */
  scheduled: number;
  /** Of them, due in the one minute measured. */
  due: number;
  /** The length of that minute, ms. */
  windowMs: number;
  /** /up answers whose store work is timed. */
  ups: number;
}

export interface SeedResult {
  seedMs: number;
  /** Each /up's store work, ms: journal add, settings read, reminder scheduled, journal remove. */
  up: ReturnType<typeof summarize>;
}

export interface SendResult {
  storeBytes: number;
  /** How late each reminder's post came back, ms after its due time. */
  lateness: ReturnType<typeof summarize>;
  sent: number;
  failed: number;
  retried: number;
  /** State counts in the store once the minute is over. */
  states: Record<string, number>;
  baselineRssMb: number;
  /** RSS once the 100,000 are in the store and the scheduler is running, before the minute. */
  idleRssMb: number;
  /** The highest RSS sampled (every 100 ms) during the minute. */
  peakRssMb: number;
}

const MB = 1024 * 1024;
const HOUR = 3_600_000;

/** Snowflake-like ids, distinct per index. */
const guildId = (i: number): string => String(1_200_000_000_000_000_000n + BigInt(i));
const channelId = (i: number): string => String(1_300_000_000_000_000_000n + BigInt(i));
const roleId = (i: number): string => String(1_400_000_000_000_000_000n + BigInt(i));

const later = (job: RemindersJob): number => job.scheduled - job.due;

async function seed(job: RemindersJob): Promise<SeedResult> {
  const store = await openStore(job.store);
  const settings = new SettingsRepository(store);
  const reminders = new ReminderRepository(store);
  const journal = new StoreUpJournal(store, { owner: 'bench' });

  // ---- 100,000 servers with reminders on, the reminders of all but `due` hours away ----
  const seedStarted = performance.now();
  const now = Date.now();
  const chunk = job.engine === 'sqlite' ? 2_000 : 1_000;
  const laterCount = later(job);
  for (let from = 0; from < job.scheduled; from += chunk) {
    const rows: Insertable<RemindersTable>[] = [];
    const settingsRows: Insertable<GuildSettingsTable>[] = [];
    for (let i = from; i < Math.min(from + chunk, job.scheduled); i++) {
      settingsRows.push({
        guild_id: guildId(i),
        reminder_channel_id: channelId(i),
        reminder_role_id: i % 2 === 0 ? roleId(i) : null,
        reminder_template: null,
        public_language: i % 3 === 0 ? 'ru' : 'auto',
        problem: null,
        problem_at: null,
        updated_at: now,
      });
      // The ones due in the minute are added just before it (below); the rest within 4 hours.
      if (i >= laterCount) continue;
      const dueAt = now + HOUR + Math.floor((i / laterCount) * 3 * HOUR);
      rows.push({ guild_id: guildId(i), next_up_at: dueAt, ...scheduledColumns(dueAt, now) });
    }
    await store.run(async (db) => {
      await db.insertInto('guild_settings').values(settingsRows).execute();
      if (rows.length > 0) await db.insertInto('reminders').values(rows).execute();
    });
  }
  const seedMs = performance.now() - seedStarted;

  // ---- the store's part of an /up, one after another, on servers among the 100,000 ----
  const upTimes: number[] = [];
  for (let n = 0; n < job.ups; n++) {
    const i = (n * 97) % laterCount;
    const id = String(1_500_000_000_000_000_000n + BigInt(n));
    const t = performance.now();
    await journal.add({
      interactionId: id,
      token: `aW50ZXJhY3Rpb246${id}:${'x'.repeat(150)}`,
      applicationId: job.applicationId,
      guildId: guildId(i),
      channelId: channelId(i),
      channelName: 'general',
      userId: id,
      locale: 'en-US',
      guildLocale: 'en-US',
      createdAt: Date.now(),
    });
    await settings.get(guildId(i));
    const dueAt = now + 2 * HOUR + n;
    await reminders.scheduleGuild(guildId(i), { dueAt, nextUpAt: dueAt }, Date.now());
    await journal.remove(id);
    upTimes.push(performance.now() - t);
  }
  await store.close();
  return { seedMs, up: summarize(upTimes) };
}

async function send(job: RemindersJob): Promise<SendResult> {
  // What the bot has loaded before it opens its store.
  await Promise.all([import('discord.js'), import('pino'), import('undici'), import('@discordjs/rest')]);
  const baseline = await settle();
  const store = await openStore(job.store);
  const settings = new SettingsRepository(store);
  const reminders = new ReminderRepository(store);

  // ---- the minute: job.due reminders, evenly spread, the first 2 s from now ----
  const windowStart = Date.now() + 2_000;
  await store.run((db) =>
    db
      .insertInto('reminders')
      .values(
        Array.from({ length: job.due }, (_, k) => {
          const dueAt = windowStart + Math.floor((k / job.due) * job.windowMs);
          return {
            guild_id: guildId(later(job) + k),
            next_up_at: dueAt,
            ...scheduledColumns(dueAt, Date.now()),
          };
        }),
      )
      .execute(),
  );

  const logger = createLogger({ level: 'warn' });
  const rest = new REST({ api: job.discordApi, version: '10' }).setToken('bench.token.not-a-secret');
  const lateness: number[] = [];
  let sent = 0;
  let failed = 0;
  let retried = 0;
  let finished: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const scheduler = new ReminderScheduler({
    reminders,
    owner: `bench:${process.pid}`,
    logger,
    sender: new DiscordReminderSender({
      rest,
      settings,
      commands: new CommandMentions({ rest, applicationId: () => job.applicationId, logger }),
      guild: (id) => ({ name: `Server ${id.slice(-6)}`, preferredLocale: 'en-US' }),
      roleDeleted: () => false,
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
      if (sent + failed >= job.due) finished();
    },
  });
  scheduler.start();
  const idle = await settle();
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 100);
  const bound = setTimeout(finished, job.windowMs + 30_000);
  await allDone;
  clearTimeout(bound);
  clearInterval(sampler);
  await scheduler.stop();

  const states = Object.fromEntries(
    (
      await store.run((db) =>
        db
          .selectFrom('reminders')
          .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
          .groupBy('state')
          .execute(),
      )
    ).map((row) => [row.state, Number(row.n)]),
  );
  const storeBytes = await sizeOf(job, store);
  await store.close();
  return {
    storeBytes,
    lateness: summarize(lateness),
    sent,
    failed,
    retried,
    states,
    baselineRssMb: baseline.rss / MB,
    idleRssMb: idle.rss / MB,
    peakRssMb: peak / MB,
  };
}

/** SQLite: the file and its write-ahead log; PostgreSQL: the schema's tables with their indexes. */
async function sizeOf(job: RemindersJob, store: Awaited<ReturnType<typeof openStore>>): Promise<number> {
  if (job.engine === 'sqlite') {
    const file = join(job.store.dataDir, SQLITE_FILE_NAME);
    const size = (path: string) => {
      try {
        return statSync(path).size;
      } catch {
        return 0;
      }
    };
    return size(file) + size(`${file}-wal`);
  }
  const { rows } = await store.run((db) =>
    sql<{ bytes: string }>`
      select coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as bytes
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = current_schema() and c.relkind = 'r'`.execute(db),
  );
  return Number(rows[0]?.bytes ?? 0);
}

const job = JSON.parse(process.argv[3] ?? '{}') as RemindersJob;
(process.argv[2] === 'seed' ? seed(job) : send(job)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

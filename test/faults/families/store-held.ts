/**
 * S4, S4pg: the store held by someone else for 10 s, on the built bot as a child: an outside
 * process holding the SQLite file's write lock (a backup, a `sqlite3` shell in the middle of a
 * write), or a PostgreSQL session locking the bot's tables against writes. Members press /up and a
 * reminder falls due meanwhile: every deferral goes out within Discord's 3 s, the gateway's
 * heartbeats keep their time (the event loop never waits on the lock), and once the lock is let
 * go the server is raised and the up recorded, and the reminder sent, once each.
 * S5: a damaged SQLite file: one error line that says so, /readyz false, and what does not read
 * the damaged part still answered.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import {
  type Engine,
  HistoryRepository,
  openStore,
  ReminderRepository,
  SettingsRepository,
  SQLITE_FILE_NAME,
} from '../../../src/store/index.js';
import { isFinalAnswer, makeGuild } from '../../discord/index.js';
import { isEphemeral, LEVEL, liveMessages } from '../../e2e/harness.js';
import { IDS } from '../../emulator/index.js';
import { readyz } from '../../ops/helpers.js';
import { damageTable } from '../../store/damage.js';
import type { BotProcess } from '../../support/bot-process.js';
import { eventually } from '../../support/wait.js';
import { bumpsOf, childEnv, freshGuild, newUserRef, processHygiene, startWorld } from '../fixtures.js';
import { Checks, message, startBot, track } from '../helpers.js';
import type { Row } from '../runner.js';

const HOLD_MS = 10_000;
const HEARTBEAT_MS = 1_000;
/** A second server, whose reminder falls due while the store is held (the /up's server moves its own). */
const quietGuild = makeGuild({ name: 'Quiet Corner' });
const ROOT = join(import.meta.dirname, '../../..');

interface Holder {
  /** Resolves once the lock is taken. */
  taken: Promise<void>;
  /** Resolves once it is let go (after HOLD_MS). */
  released: Promise<void>;
  stop(): void;
}

/** Another process opens the file, takes the write lock, keeps it HOLD_MS, and lets it go. */
function holdSqliteFile(file: string): Holder {
  const script = `
    const Sqlite = require('better-sqlite3');
    const db = new Sqlite(process.env.HELD_FILE);
    db.exec('BEGIN IMMEDIATE');
    db.exec('CREATE TABLE held_by_someone_else (x)');
    process.stdout.write('taken\\n');
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); process.stdout.write('released\\n'); }, ${HOLD_MS});
  `;
  const child = spawn(process.execPath, ['-e', script], {
    cwd: ROOT,
    env: { ...process.env, HELD_FILE: file },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (out.includes(word)) resolve();
      };
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        check();
      });
      child.once('exit', (code) =>
        out.includes(word) ? resolve() : reject(new Error(`holder exited ${code}`)),
      );
    });
  return { taken: said('taken'), released: said('released'), stop: () => child.kill('SIGKILL') };
}

/** Another PostgreSQL session locks the bot's tables against every write for HOLD_MS. */
function holdPostgresTables(databaseUrl: string, schema: string): Holder {
  const client = new pg.Client({ connectionString: databaseUrl });
  let timer: NodeJS.Timeout | undefined;
  const tables = ['pending_ups', 'reminders', 'up_history', 'guild_settings']
    .map((t) => `"${schema}".${t}`)
    .join(', ');
  const taken = (async () => {
    await client.connect();
    await client.query('BEGIN');
    // EXCLUSIVE: reads go on, every write waits (as a long migration or a bulk job would).
    await client.query(`LOCK TABLE ${tables} IN EXCLUSIVE MODE`);
  })();
  const released = taken.then(
    () =>
      new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => {
          client.query('ROLLBACK').then(() => resolve(), reject);
        }, HOLD_MS);
      }),
  );
  return {
    taken,
    released,
    stop: () => {
      clearTimeout(timer);
      void client.end().catch(() => undefined);
    },
  };
}

/** The longest gap between two heartbeats of shard 0 from `from` (performance.now()) to now. */
function longestHeartbeatGap(heartbeats: ReadonlyArray<{ at: number }>, from: number): number {
  const times = heartbeats.map((h) => h.at).filter((at) => at >= from - HEARTBEAT_MS * 2);
  let gap = 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, (times[i] ?? 0) - (times[i - 1] ?? 0));
  return Math.max(gap, performance.now() - (times.at(-1) ?? from));
}

function heldRow(engine: Engine): Row {
  const sqlite = engine === 'sqlite';
  return {
    id: sqlite ? 'S4' : 'S4pg',
    postgres: !sqlite,
    fault: sqlite
      ? "another process holds the SQLite file's write lock for 10 s during /up and a due reminder"
      : 'another session locks the tables against writes for 10 s during /up and a due reminder',
    expected:
      'deferrals < 3 s, heartbeats on time; after the lock: bumps +1, one history row, the reminder sent once',
    timeoutMs: 60_000,
    run: async () => {
      const c = new Checks();
      const world = await startWorld(engine, { guilds: [quietGuild], heartbeatIntervalMs: HEARTBEAT_MS });
      const procs: BotProcess[] = [];
      let holder: Holder | undefined;
      let observed = '';
      const store = await openStore(world.store.options);
      const closeStore = track(() => store.close());
      try {
        const reminderChannel = quietGuild.channels[0]?.id as string;
        const now = Date.now();
        await new SettingsRepository(store).update(
          quietGuild.id,
          { reminderChannelId: reminderChannel },
          now,
        );
        const bot = startBot(sqlite ? 'S4' : 'S4pg', childEnv(world));
        procs.push(bot);
        await bot.ready();
        await bot.waitForEntry(
          (e) => e.msg === 'the ups from before the restart are dealt with',
          10_000,
          'recovery',
        );
        const gatewayBefore = world.discord.gatewayLog.length;

        // Due a few seconds on: the lock is taken meanwhile (the scheduling itself would wait for it
        // on PostgreSQL), and the scheduler finds the reminder due while the store cannot be written.
        const reminders = new ReminderRepository(store);
        const dueAt = Date.now() + 4_000;
        await reminders.scheduleGuild(quietGuild.id, { dueAt, nextUpAt: dueAt }, Date.now());
        holder = sqlite
          ? holdSqliteFile(join(world.store.name, SQLITE_FILE_NAME))
          : holdPostgresTables(
              world.store.options.databaseUrl as string,
              world.store.options.schema as string,
            );
        await holder.taken;
        const heldAt = performance.now();
        c.that(
          Date.now() < dueAt,
          'the lock was taken after the reminder fell due (a slow start of the holder)',
        );
        const bumpsBefore = bumpsOf(world.emu, IDS.serverFresh);
        const presses = [];
        for (let i = 0; i < 3; i++) {
          presses.push(
            world.discord.sendCommand({ guildId: freshGuild.id, name: 'up', user: newUserRef(`held-${i}`) }),
          );
          await new Promise((resolve) => setTimeout(resolve, 700));
        }
        const deferrals = await Promise.all(
          presses.map(async (h) => {
            const first = await h.firstResponse(5_000).catch(() => undefined);
            return first ? Math.round(first.at - h.sentAt) : Number.POSITIVE_INFINITY;
          }),
        );
        c.that(
          deferrals.every((ms) => ms < 3_000),
          `deferrals ${deferrals.join(', ')} ms (Discord's window is 3 s)`,
        );
        await holder.released;
        const heldMs = Math.round(performance.now() - heldAt);
        const gap = Math.round(longestHeartbeatGap(world.discord.heartbeats, heldAt));
        c.that(
          gap < HEARTBEAT_MS + 1_000,
          `a heartbeat came ${gap} ms after the one before (interval ${HEARTBEAT_MS} ms)`,
        );
        c.none(
          world.discord.gatewayLog
            .slice(gatewayBefore)
            .filter((e) => e.kind !== 'connect')
            .map((e) => `${e.kind}${e.code ? ` ${e.code}` : ''}`),
          'gateway events while held',
        );

        const finals = await Promise.all(presses.map((h) => h.waitFor(isFinalAnswer, 40_000).then(() => h)));
        const outcomes = finals.map((h) => {
          const shown = liveMessages(h.view())[0];
          return shown && isEphemeral(shown) ? 'private' : 'public';
        });
        c.equal(outcomes.filter((o) => o === 'public').length, 1, 'public answers (one success)');
        c.equal(bumpsOf(world.emu, IDS.serverFresh) - bumpsBefore, 1, 'bumps added');
        const recorded = await eventually(
          async () => {
            const rows = await new HistoryRepository(store).members(freshGuild.id, 0);
            return rows.length > 0 ? rows : undefined;
          },
          10_000,
          'the up in the history',
        ).catch(() => []);
        c.equal(
          recorded.reduce((sum, m) => sum + m.ups, 0),
          1,
          'ups in the history',
        );
        const reminder = await world.discord
          .waitForMessage(reminderChannel, undefined, 30_000)
          .catch(() => undefined);
        c.that(reminder !== undefined, 'the reminder was not posted');
        c.that((reminder?.receivedAt ?? 0) >= dueAt, 'the reminder came early');
        await eventually(
          async () => ((await reminders.getGuild(quietGuild.id))?.state === 'sent' ? true : undefined),
          10_000,
          'the reminder recorded as sent',
        ).catch(() => c.that(false, 'the reminder is not recorded as sent'));
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        c.equal(world.discord.channelMessages(reminderChannel).length, 1, 'reminder messages');
        c.none(
          bot
            .entries()
            .filter((e) => (e.level ?? 0) >= LEVEL.error)
            .map((e) => String(e.msg)),
          'error lines',
        );
        observed =
          `held ${heldMs} ms; deferrals ${deferrals.join('/')} ms; longest heartbeat gap ${gap} ms; ` +
          `after: bumps +${bumpsOf(world.emu, IDS.serverFresh) - bumpsBefore}, ` +
          `answers ${outcomes.join('/')}, history ${recorded.reduce((sum, m) => sum + m.ups, 0)}, ` +
          `reminder posted ${world.discord.channelMessages(reminderChannel).length}× ` +
          `${Math.round((reminder?.receivedAt ?? 0) - dueAt)} ms after due`;
      } catch (err) {
        observed = `threw: ${message(err)}`;
        c.that(false, observed);
      }
      holder?.stop();
      await Promise.all(procs.map((p) => p.stop()));
      processHygiene(world, procs, c);
      await closeStore();
      await world.close();
      return { observed, problems: c.problems };
    },
  };
}

const damagedFile: Row = {
  id: 'S5',
  fault: "the SQLite file damaged (the history's pages overwritten) while the bot is stopped",
  expected:
    'one error line naming the file, /readyz 503 "damaged", /leaderboard a private error, /up still works',
  timeoutMs: 40_000,
  run: async () => {
    const c = new Checks();
    const world = await startWorld('sqlite');
    const procs: BotProcess[] = [];
    let observed = '';
    try {
      const file = join(world.store.name, SQLITE_FILE_NAME);
      const store = await openStore(world.store.options);
      const history = new HistoryRepository(store);
      for (let i = 0; i < 200; i++) {
        await history.record({
          id: `bot:old-${i}`,
          guildId: freshGuild.id,
          userId: `${100 + (i % 7)}`,
          at: Date.now() - i * 60_000,
          upCount: null,
          source: 'bot',
        });
      }
      await store.close();
      damageTable(file, 'up_history');

      const bot = startBot('S5', { ...childEnv(world), HTTP_PORT: '0' });
      procs.push(bot);
      const port = await bot.opsPort();
      await bot.ready();
      const board = world.discord.sendCommand({
        guildId: freshGuild.id,
        name: 'leaderboard',
        user: newUserRef('s5'),
      });
      await board.waitFor(isFinalAnswer, 15_000);
      const shown = liveMessages(board.view())[0];
      c.that(shown !== undefined && isEphemeral(shown), '/leaderboard did not answer privately');
      const told = await eventually(
        () => {
          const lines = bot.entries().filter((e) => String(e.msg).includes('is damaged'));
          return lines.length > 0 ? lines : undefined;
        },
        5_000,
        'the damaged line',
      ).catch(() => []);
      c.equal(told.length, 1, '"is damaged" lines');
      c.equal(told[0]?.level, LEVEL.error, 'its level');
      c.that(String(told[0]?.msg).includes(file), 'the line does not name the file');
      const ready = await readyz(port);
      c.equal(ready.status, 503, '/readyz status');
      c.equal(
        (ready.body.detail as { store?: string } | undefined)?.store,
        'damaged',
        '/readyz detail.store',
      );
      // A second look does not say it again.
      const again = world.discord.sendCommand({
        guildId: freshGuild.id,
        name: 'leaderboard',
        user: newUserRef('s5b'),
      });
      await again.waitFor(isFinalAnswer, 15_000);
      c.equal(
        bot.entries().filter((e) => String(e.msg).includes('is damaged')).length,
        1,
        '"is damaged" lines after a second /leaderboard',
      );
      const up = world.discord.sendCommand({ guildId: freshGuild.id, name: 'up', user: newUserRef('s5c') });
      await up.waitFor(isFinalAnswer, 15_000);
      const upShown = liveMessages(up.view())[0];
      c.that(upShown !== undefined && !isEphemeral(upShown), '/up was not answered publicly');
      observed =
        `/leaderboard private error; 1 error line "${String(told[0]?.msg).slice(0, 60)}…"; ` +
        `/readyz ${ready.status} ${JSON.stringify(ready.body.detail)}; /up public`;
    } catch (err) {
      observed = `threw: ${message(err)}`;
      c.that(false, observed);
    }
    await Promise.all(procs.map((p) => p.stop()));
    processHygiene(world, procs, c);
    await world.close();
    return { observed, problems: c.problems };
  },
};

export const heldStoreRows: Row[] = [heldRow('sqlite'), heldRow('postgres'), damagedFile];

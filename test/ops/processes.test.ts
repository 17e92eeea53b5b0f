/**
 * The built entry points as child processes, as Docker runs them: `node dist/src/app/main.js` (one
 * process, internal shards) and `node dist/src/app/sharded.js` (discord.js's ShardingManager, one
 * `main.js` per shard; the manager alone posts statistics and serves the operations endpoint).
 *
 * Each test has its own Discord stand-in and directory emulator on 127.0.0.1, so the tests run
 * concurrently: most of their time is waiting (the sharded poster's first post comes 30 s after
 * every shard is ready, a delay no setting shortens), and vitest runs one file at a time on 2 cores.
 * Each child gets a temporary working directory (no `.env`) and only the environment given here;
 * the sharded mode, which needs PostgreSQL, a schema of the test's own, dropped after.
 * A test's time is its own plus START_BOUND_MS (60 s) for its processes' start-up on a busy
 * machine: a start-up that does not come fails first, with the process's last lines.
 */
import { hostname } from 'node:os';
import { describe, it } from 'vitest';
import { openStore, WebhookRepository } from '../../src/store/index.js';
import { shardForGuild, snowflake } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { viewOf } from '../support/layout-view.js';
import { freePort } from '../support/local.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { isHandled } from '../support/rig.js';
import {
  type BotProcess,
  bodyOf,
  type CapturedLine,
  descendantsOf,
  eventually,
  httpGet,
  isAlive,
  readyz,
  START_BOUND_MS,
  sample,
  startedReady,
  statsRequests,
  withTimeout,
} from './helpers.js';
import { type World, world } from './world.js';

const EPHEMERAL = 64;

const someone = () => ({ id: snowflake(), username: `ops_${Math.random().toString(36).slice(2, 8)}` });

const lineAfter =
  (at: number, msg: string) =>
  (e: { msg?: string }, line: CapturedLine): boolean =>
    e.msg === msg && line.at >= at;

describe.concurrent('built entry points as child processes', () => {
  // The shards' processes share their state in PostgreSQL: sharded.js requires it.
  describe.skipIf(!HAS_POSTGRES)('process-per-shard mode (sharded.js)', () => {
    const SHARDS = 2;
    const GUILDS = 300;
    const INTERVAL_MS = 3_000;
    const shardedEnv = {
      SHARD_COUNT: String(SHARDS),
      STATS_INTERVAL: '3s',
      STATS_ALLOW_SHORT_INTERVAL: 'true',
      // Long enough to kill and respawn a shard process before the first post.
      STATS_FIRST_DELAY: '12s',
    };

    const title =
      'reports the true totals, respawns a killed shard process, posts per interval, stops on SIGTERM';
    it(title, async ({ expect, onTestFinished }) => {
      // The emulator's own limits stay on (1 POST /stats per 2 s): a 3 s interval never meets them.
      // max_concurrency 16: the manager spawns a process every 344 ms rather than every 2.75 s.
      const w = await world(onTestFinished, {
        shards: SHARDS,
        guilds: GUILDS,
        emulator: {},
        maxConcurrency: 16,
        postgres: true,
      });
      const startedAt = Date.now();
      const bot = w.spawn('sharded.js', shardedEnv);
      const ready = await startedReady(bot);
      const { port } = ready;
      console.log(`sharded: /readyz 200 after ${ready.at - startedAt} ms`);
      // The manager is one host of the design of several (docs/several-hosts.md).
      expect(ready.body).toEqual({
        ready: true,
        detail: { shards: SHARDS, expected: SHARDS, notReady: [], host: hostname(), shardIds: [0, 1] },
      });
      // A second manager on the same store (another machine, by mistake) is refused, in one line,
      // before it starts any shard process: it would identify the same shards again.
      const intruder = w.spawn('sharded.js', { ...shardedEnv, HOST_ID: 'another-machine' });
      const refused = await withTimeout(intruder.exited, 15_000, 'the second manager to exit');
      expect(refused.code).toBe(1);
      expect(intruder.stderr.trim()).toMatch(
        /^This host \(another-machine\) may not run shards 0,1: shard 0 is run by host \S+ \(seen \d+ s ago\); shard 1 is run by host \S+ \(seen \d+ s ago\)\. /,
      );
      expect(intruder.entries().some((e) => e.msg === 'shard process started')).toBe(false);
      const metrics = (await httpGet(port, '/metrics')).body;
      expect(sample(metrics, 'discord_guilds')).toBe(GUILDS);
      expect(sample(metrics, 'discord_shards', { status: 'ready' })).toBe(SHARDS);
      expect(sample(metrics, 'discord_shards', { status: 'not_ready' })).toBe(0);

      // The poster has seen every shard ready; its first post is 12 s away. Kill a shard process now.
      await bot.waitForLine(
        (e) => e.msg === 'every shard is ready; first stats post scheduled',
        5_000,
        'the poster',
      );
      const shards = bot.descendants();
      expect(shards).toHaveLength(SHARDS);
      const victim = shards[SHARDS - 1] as number;
      const killedAt = Date.now();
      process.kill(victim, 'SIGKILL');
      const statuses = new Set<number>();
      const watching = eventually(
        async () => {
          statuses.add((await readyz(port)).status);
          return undefined;
        },
        4_000,
        'nothing (watching /readyz)',
        100,
      ).catch(() => undefined);
      await bot.waitForLine(
        lineAfter(killedAt, 'shard process died; respawning'),
        5_000,
        'the death of the shard',
      );
      const respawned = await eventually(
        () => {
          const now = descendantsOf(bot.pid);
          return now.length === SHARDS && !now.includes(victim) ? now : undefined;
        },
        START_BOUND_MS,
        'a new shard process',
      );
      for (const pid of respawned) bot.seenPids.add(pid);
      expect(isAlive(victim)).toBe(false);
      await bot.waitForLine(
        lineAfter(killedAt, 'shard ready'),
        START_BOUND_MS,
        'the respawned shard to be ready',
      );
      await watching;
      console.log(
        `sharded: /readyz answers while a shard process was respawned: ${[...statuses].join(', ')}`,
      );
      // The manager refreshes its view every 2 s: the totals are right again after the respawn.
      await eventually(
        async () => {
          const text = (await httpGet(port, '/metrics')).body;
          const guilds = sample(text, 'discord_guilds');
          const up = sample(text, 'discord_shards', { status: 'ready' });
          const down = sample(text, 'discord_shards', { status: 'not_ready' });
          const readyNow = (await readyz(port)).status === 200;
          return guilds === GUILDS && up === SHARDS && down === 0 && readyNow ? true : undefined;
        },
        6_000,
        'the totals after the respawn',
        200,
      );

      // The first post: the true totals, gathered from both processes (one of them respawned).
      const expected = { servers: GUILDS, shards: SHARDS, users: w.users };
      const first = await eventually(
        () => statsRequests(w.emu).find((r) => r.status === 200),
        40_000,
        'the first POST /stats',
        100,
      );
      console.log(`sharded: first POST /stats ${first.at - startedAt} ms after the start`);
      expect(bodyOf(first)).toEqual(expected);
      const second = await eventually(
        () => statsRequests(w.emu).filter((r) => r.status === 200)[1],
        INTERVAL_MS + 3_000,
        'the second POST /stats',
        50,
      );
      expect(bodyOf(second)).toEqual(expected);
      const gap = second.at - first.at;
      console.log(`sharded: second POST /stats ${gap} ms after the first`);
      // The interval is kept from tick to tick; on the way, each post takes its turn at the limits
      // the processes share (a database transaction), whose time varies on a busy machine.
      expect(gap).toBeGreaterThanOrEqual(INTERVAL_MS - 250);
      expect(gap).toBeLessThan(INTERVAL_MS + 1_500);
      // One request per interval, none refused.
      expect(statsRequests(w.emu).map((r) => r.status)).toEqual([200, 200]);
      const text = (await httpGet(port, '/metrics')).body;
      expect(sample(text, 'directory_stats_posts_total', { outcome: 'posted' })).toBeGreaterThanOrEqual(1);

      const signalledAt = performance.now();
      bot.kill('SIGTERM');
      const exit = await withTimeout(bot.exited, 10_000, 'the manager to exit after SIGTERM');
      const took = Math.round(exit.at - signalledAt);
      console.log(`sharded: shutdown took ${took} ms`);
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(took).toBeLessThan(10_000);
      await eventually(
        () => (bot.alive().length === 0 ? true : undefined),
        3_000,
        'every shard process to end',
      );
      // Each shard process shut down on its own, gracefully.
      expect(bot.entries().filter((e) => e.msg === 'shut down' && e.role === undefined)).toHaveLength(SHARDS);
      // Every process had the store open on PostgreSQL: the manager, both shards, the respawned one.
      const opened = bot.entries().filter((e) => e.msg === 'store open');
      expect(opened.map((e) => e.engine)).toEqual(Array(SHARDS + 2).fill('postgres'));
    }, 135_000);

    // The defect of issue 15: each shard process kept the directory's limits on its own, and six
    // /up within 0.6 s across both shard processes got 3 × 429 of 9 requests. They share them now.
    const limitsTitle = "keeps the directory's limits across shard processes: /up from both, 0 × 429";
    it(limitsTitle, async ({ expect, onTestFinished }) => {
      const w = await world(onTestFinished, {
        shards: SHARDS,
        guilds: 20,
        // The published limits, enforced: 5 per 5 s, 1 POST /server per 2 s.
        emulator: {},
        maxConcurrency: 16,
        postgres: true,
      });
      const bot = w.spawn('sharded.js', { ...shardedEnv, STATS_FIRST_DELAY: '60s' });
      await startedReady(bot);
      const onShard = (shard: number) => w.guildIds.filter((id) => shardForGuild(id, SHARDS) === shard);
      const [zero, one] = [onShard(0), onShard(1)];
      expect(zero.length).toBeGreaterThanOrEqual(3);
      expect(one.length).toBeGreaterThanOrEqual(3);
      const guilds = [zero[0], one[0], zero[1], one[1], zero[2], one[2]] as string[];
      const sentAt = performance.now();
      const ups = [];
      for (const guildId of guilds) {
        ups.push(w.discord.sendCommand({ guildId, name: 'up', user: someone() }));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(new Set(ups.map((up) => up.shardId))).toEqual(new Set([0, 1]));
      // Every /up gets its final answer: the deferred reply edited (POST /server 1 per 2 s: ~10 s).
      const edited = (r: { method: string; path: string; status: number }) =>
        r.method === 'PATCH' && r.path.endsWith('/messages/@original') && r.status === 200;
      await Promise.all(ups.map((up) => up.waitFor(edited, 25_000)));
      const posts = w.emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server'));
      const tooMany = w.emu.requests.filter((r) => r.status === 429);
      console.log(
        `sharded: 6 /up over 2 shard processes: ${posts.length} POST /server, ${tooMany.length} × 429, ` +
          `last answer ${Math.max(...ups.map((up) => up.requests().filter(edited).at(-1)?.at ?? 0)) - sentAt} ms after the first /up`,
      );
      expect(tooMany.map((r) => `${r.method} ${r.path}`)).toEqual([]);
      expect(posts).toHaveLength(6);
      expect(posts.every((r) => r.status === 200)).toBe(true);
      // The route's limit held across the processes: POST /server at least 2 s apart.
      const gaps = posts.slice(1).map((r, i) => r.at - (posts[i] as { at: number }).at);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(2_000);
      for (const up of ups) expect(up.view().original?.embeds?.length ?? 0).toBeGreaterThan(0);
    }, 120_000);

    it("the manager receives the directory's webhooks; the shard processes announce each event once", async ({
      expect,
      onTestFinished,
    }) => {
      const w = await world(onTestFinished, {
        shards: SHARDS,
        guilds: 20,
        maxConcurrency: 16,
        postgres: true,
      });
      const guild = w.discord.guilds.get(IDS.serverFresh);
      const channelId = guild?.channels?.[0]?.id;
      if (!channelId || !w.store) throw new Error('no channel in the test server');
      const store = await openStore(w.store.options);
      onTestFinished(() => store.close());
      const port = await freePort();
      const bot = w.spawn('sharded.js', {
        ...shardedEnv,
        WEBHOOK_PORT: String(port),
        WEBHOOK_HOST: '127.0.0.1',
      });
      await startedReady(bot);
      await new WebhookRepository(store).configure(
        IDS.serverFresh,
        'sharded-key-1234',
        channelId,
        Date.now(),
      );
      w.emu.webhooks.set(IDS.serverFresh, {
        url: `http://127.0.0.1:${port}/hooks/directory/${IDS.serverFresh}`,
        key: 'sharded-key-1234',
      });
      expect(await w.emu.webhooks.test(IDS.serverFresh)).toBe(200);
      const base = Date.now() - 60_000;
      for (let i = 0; i < 5; i++) {
        const text = `comment ${i}`;
        expect(
          await w.emu.webhooks.comment(IDS.serverFresh, 'new', {
            user: '310000000000000001',
            new: text,
            at: base + i,
          }),
        ).toBe(200);
      }
      // Both shard processes look at the store every 5 s; each event is claimed by one of them.
      await eventually(
        () => (w.discord.channelMessages(channelId).length >= 6 ? true : undefined),
        15_000,
        'six announcements',
        100,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const titles = w.discord.channelMessages(channelId).map((m) => viewOf(m.body));
      expect(titles.map((e) => e?.title)).toEqual([
        '✅ Webhook connected',
        ...Array(5).fill('💬 New comment on the directory'),
      ]);
      expect(titles.slice(1).map((e) => e?.description)).toEqual(
        [0, 1, 2, 3, 4].map((i) => `> comment ${i}`),
      );
    }, 120_000);

    // BUG (reported): a shard process does not notice that its manager is gone. It stays connected to
    // Discord (answering interactions next to the shards of a restarted manager) until its gateway
    // connection drops, and then dies of an unhandled ERR_IPC_CHANNEL_CLOSED (ShardClientUtil's send).
    it('shard processes end when the manager is killed', async ({ expect, onTestFinished }) => {
      const w = await world(onTestFinished, {
        shards: SHARDS,
        guilds: 20,
        maxConcurrency: 16,
        postgres: true,
      });
      const bot = w.spawn('sharded.js', shardedEnv);
      await startedReady(bot);
      const shards = bot.descendants();
      expect(shards).toHaveLength(SHARDS);
      process.kill(bot.pid, 'SIGKILL');
      await withTimeout(bot.exited, 5_000, 'the manager to die');
      const left = await eventually(
        () => (shards.some(isAlive) ? undefined : []),
        3_000,
        'the shard processes to end after their manager died',
        100,
      ).catch(() => shards.filter(isAlive));
      expect(left, 'shard processes still running 3 s after the manager died').toEqual([]);
    }, 90_000);
  });

  describe('graceful shutdown of main.js', () => {
    const SHARDS = 2;
    const mainEnv = { SHARD_COUNT: String(SHARDS), STATS_INTERVAL: '15m' };

    /** Starts main.js and waits for /readyz 200. */
    async function startReady(w: World): Promise<BotProcess> {
      const bot = w.spawn('main.js', mainEnv);
      await startedReady(bot);
      return bot;
    }

    const inFlight = 'SIGTERM with /up in flight: /up answered, later ones hear "restarting", exit 0 < 10 s';
    it(inFlight, async ({ expect, onTestFinished }) => {
      const w = await world(onTestFinished, { shards: SHARDS, guilds: 20 });
      const bot = await startReady(w);
      // The directory takes 3 s to answer the up: it is still running when SIGTERM comes.
      w.emu.faults.add({ kind: 'latency', ms: 3_000, method: 'POST', path: /^\/server$/, times: 1 });
      const up = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user: someone() });
      expect((await up.firstResponse(3_000)).type).toBe(5);

      const signalledAt = performance.now();
      bot.kill('SIGTERM');
      await bot.waitForLine((e) => e.msg === 'shutting down', 2_000, '"shutting down"');

      // An interaction that arrives now is refused politely, in private.
      const late = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user: someone() });
      const refusal = await late.firstResponse(2_000);
      expect(refusal.type).toBe(4);
      expect(refusal.data).toMatchObject({
        flags: EPHEMERAL,
        content: expect.stringMatching(/restarting/i),
      });

      const exit = await withTimeout(bot.exited, 10_000, 'main.js to exit after SIGTERM');
      const took = Math.round(exit.at - signalledAt);
      console.log(`shutdown took ${took} ms (with an /up in flight for 3 s)`);
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(took).toBeLessThan(10_000);
      expect(took, 'the shutdown waited for the /up').toBeGreaterThanOrEqual(1_500);

      // The /up in flight got its final answer: the deferred reply was edited.
      const edit = up
        .requests()
        .find((r) => r.method === 'PATCH' && r.path.endsWith('/messages/@original') && r.status === 200);
      expect(
        edit,
        JSON.stringify(up.requests().map((r) => `${r.method} ${r.path} ${r.status}`)),
      ).toBeDefined();
      expect(up.view().original?.embeds?.length ?? 0).toBeGreaterThan(0);
      expect(
        w.emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server')),
      ).toHaveLength(1);
      const handled = bot.entries().find((e) => isHandled(e) && e.name === 'up');
      expect(handled?.outcome).toBe('success');
      expect(bot.entries().some((e) => e.msg === 'shut down')).toBe(true);
      expect(bot.entries().filter((e) => (e.level ?? 0) >= 50)).toEqual([]);
    }, 90_000);

    it('a second SIGTERM exits at once', async ({ expect, onTestFinished }) => {
      const w = await world(onTestFinished, { shards: SHARDS, guilds: 20 });
      const bot = await startReady(w);
      w.emu.faults.add({ kind: 'latency', ms: 6_000, method: 'POST', path: /^\/server$/, times: 1 });
      const up = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user: someone() });
      expect((await up.firstResponse(3_000)).type).toBe(5);
      bot.kill('SIGTERM');
      await bot.waitForLine((e) => e.msg === 'shutting down', 2_000, '"shutting down"');
      const secondAt = performance.now();
      bot.kill('SIGTERM');
      const exit = await withTimeout(bot.exited, 3_000, 'main.js to exit after the second SIGTERM');
      const took = Math.round(exit.at - secondAt);
      console.log(`second SIGTERM: exited ${took} ms later with code ${exit.code}`);
      // At once: not after the drain, which would take 5 s more (the /up waits 6 s for the directory).
      // The bound is loose because five children start together on two cores in this file: the
      // exit then takes 0.8-1.2 s (about 0.1 s alone), most of it Node's own teardown after the
      // 'exit' event; with the gateway's thread started by the entry point (early-resume.ts) it is
      // slower than the 0.35-0.7 s it took when the thread started with the bot, cause not found.
      expect(took).toBeLessThan(3_000);
      expect(
        up.requests().some((r) => r.method === 'PATCH'),
        'the /up in flight is abandoned',
      ).toBe(false);
      // Exit code 1: not a clean stop.
      expect(exit.code).toBe(1);
      expect(bot.entries().some((e) => e.msg === 'second signal: exiting at once')).toBe(true);
    }, 90_000);

    // BUG (reported): discord.js's client.destroy() never resolves when it is called while a shard has
    // sent IDENTIFY and waits for READY (@discordjs/ws 1.2.3: destroy() aborts waitForEvent, whose
    // catch starts a second destroy that clears the first one's onclose). bot.stop() then hangs and
    // installShutdown's hard limit ends the process after 9.5 s with exit code 1.
    it('SIGTERM while a shard is still connecting exits 0, well within 10 s', async ({
      expect,
      onTestFinished,
    }) => {
      const w = await world(onTestFinished, { shards: SHARDS, guilds: 20 });
      w.discord.setIdentifyDelay(1, 8_000);
      const bot = w.spawn('main.js', mainEnv);
      await eventually(
        () => w.discord.gatewayLog.find((e) => e.kind === 'identify' && e.shardId === 1),
        START_BOUND_MS,
        'shard 1 to identify',
      );
      const signalledAt = performance.now();
      bot.kill('SIGTERM');
      const exit = await withTimeout(bot.exited, 10_000, 'main.js to exit after SIGTERM');
      const took = Math.round(exit.at - signalledAt);
      console.log(`SIGTERM while shard 1 waits for READY: exit code ${exit.code} after ${took} ms`);
      if (exit.code !== 0) console.log(bot.output().split('\n').slice(-8).join('\n'));
      expect(exit.code).toBe(0);
      expect(took).toBeLessThan(5_000);
    }, 90_000);
  });
});

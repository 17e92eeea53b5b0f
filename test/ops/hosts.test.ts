/**
 * Three hosts of one bot, as `npm start` runs on each machine (`node dist/src/app/main.js` with
 * SHARD_COUNT=6 and two SHARD_IDS each), sharing one PostgreSQL schema, against the Discord
 * stand-in with 6 shards and the directory emulator enforcing its published limits (5 per 5 s,
 * 1 per 2 s on POST /server and POST /stats). A test's time is its own plus START_BOUND_MS (60 s)
 * for its hosts' start-up on a busy machine.
 */
import { describe, it, type onTestFinished } from 'vitest';
import { openStore, ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { isFinalAnswer, shardForGuild, snowflake, startDiscordStandIn } from '../discord/index.js';
import { freshPlace } from '../store/places.js';
import { TcpProxy } from '../store/tcp-proxy.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import {
  BotProcess,
  bodyOf,
  discordLikeToken,
  eventually,
  guildSet,
  httpGet,
  readyz,
  sample,
  sleep,
  statsRequests,
  withTimeout,
} from './helpers.js';
import { type Hosts, hosts } from './hosts-world.js';

const SHARD_COUNT = 6;
/** HOST_GONE_AFTER in the test of a host that does not come back (a minute unless set). */
const GONE_AFTER_MS = 10_000;
const RANGES = ['0-1', '2-3', '4-5'];
const GUILDS = 60;
const INTERVAL_MS = 3_000;

/** The three hosts of these tests: `databaseUrl`, where they reach PostgreSQL (a proxy to cut). */
function threeHosts(
  finished: typeof onTestFinished,
  databaseUrl?: string,
  extraEnv: Record<string, string> = {},
): Promise<Hosts> {
  return hosts(finished, {
    shardCount: SHARD_COUNT,
    ranges: RANGES,
    guilds: GUILDS,
    statsIntervalMs: INTERVAL_MS,
    ...(databaseUrl ? { databaseUrl } : {}),
    extraEnv,
  });
}

/** Which host's log says it posted, per POST /stats, in order. */
function postsBy(bots: BotProcess[]): string[] {
  return bots
    .flatMap((bot) =>
      bot.lines
        .filter((l) => l.entry?.msg === 'stats posted' || l.entry?.msg?.startsWith('stats posted;'))
        .map((l) => ({ at: l.at, host: bot.name })),
    )
    .sort((a, b) => a.at - b.at)
    .map((p) => p.host);
}

/** Whether a host's log says it took the statistics lead (this run). */
function leads(bot: BotProcess): boolean {
  return (
    bot.exit === undefined && bot.entries().some((e) => e.msg === 'this host now leads the statistics posts')
  );
}

const someone = () => ({ id: snowflake(), username: `h_${Math.random().toString(36).slice(2, 8)}` });

// One at a time: each test runs three bot hosts, and three worlds at once (nine bots beside the
// other test worker, on two cores) made the timings of a loaded machine, not of the design.
describe.skipIf(!HAS_POSTGRES)('three hosts on one PostgreSQL (SHARD_IDS)', () => {
  const title =
    "share the directory's limits and one stats leader: /up on every host, 0 × 429, totals of 6 shards, leader killed";
  it(title, async ({ expect, onTestFinished }) => {
    const w = await threeHosts(onTestFinished);
    const started = await Promise.all([0, 1, 2].map((i) => w.start(i)));
    const first = await readyz(started[1]!.port);
    expect(first.body).toEqual({
      ready: true,
      detail: { shards: 2, expected: 2, notReady: [], host: 'host-1', shardIds: [2, 3] },
    });
    // Each host's /metrics names it and its shards; exactly one leads the statistics.
    const scrapes = await Promise.all(started.map(({ port }) => httpGet(port, '/metrics')));
    expect(sample(scrapes[1]!.body, 'bot_host_info', { host: 'host-1', shards: '2,3' })).toBe(1);
    await eventually(
      async () => {
        const now = await Promise.all(started.map(({ port }) => httpGet(port, '/metrics')));
        const leaders = now.filter((m, i) => sample(m.body, 'bot_stats_leader', { host: `host-${i}` }) === 1);
        return leaders.length === 1 ? true : undefined;
      },
      10_000,
      'exactly one host leading',
    );
    // A fourth host given a range another live host runs is refused, in one line.
    const intruder = new BotProcess(
      'main.js',
      { ...w.envFor(0), SHARD_IDS: '1-2', HOST_ID: 'host-9' },
      'host-9',
    );
    w.bots.push(intruder);
    const refused = await withTimeout(intruder.exited, 45_000, 'the overlapping host to exit');
    expect(refused.code).toBe(1);
    expect(intruder.stderr.trim()).toMatch(
      /^This host \(host-9\) may not run shards 1,2: shard 1 is run by host host-0 \(seen \d+ s ago\); shard 2 is run by host host-1 \(seen \d+ s ago\)\. /,
    );

    // An /up on a guild of every shard, 100 ms apart, so on every host.
    const ups = [];
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      const guildId = w.guildIds.find((id) => shardForGuild(id, SHARD_COUNT) === shard) as string;
      ups.push(w.discord.sendCommand({ guildId, name: 'up', user: someone() }));
      await sleep(100);
    }
    const edited = (r: { method: string; path: string; status: number }) =>
      r.method === 'PATCH' && r.path.endsWith('/messages/@original') && r.status === 200;
    await Promise.all(ups.map((up) => up.waitFor(edited, 30_000)));
    const posts = w.emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server'));
    expect(w.emu.requests.filter((r) => r.status === 429).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(posts.filter((r) => r.status === 200)).toHaveLength(SHARD_COUNT);
    for (const up of ups) expect(up.view().original?.embeds?.length ?? 0).toBeGreaterThan(0);

    // One post per interval, by one host, with the totals of all 6 shards.
    await eventually(() => (statsRequests(w.emu).length >= 2 ? true : undefined), 20_000, 'two stats posts');
    const stats = statsRequests(w.emu);
    expect(bodyOf(stats[0]!)).toEqual({ servers: GUILDS, shards: SHARD_COUNT, users: w.users });
    const leader = postsBy(w.bots)[0] as string;
    expect(new Set(postsBy(w.bots))).toEqual(new Set([leader]));

    // The leader is killed: another host takes the lease when it runs out and posts. The killed
    // host comes back, as an orchestrator would restart it (its shards' numbers are stale 30 s
    // after its last write, and nothing is posted without them).
    const killed = w.bots.find((b) => b.name === leader) as BotProcess;
    const before = statsRequests(w.emu).length;
    const killedAt = Date.now();
    killed.kill('SIGKILL');
    await eventually(
      () => (w.bots.some((b) => b.name !== leader && leads(b)) ? true : undefined),
      30_000,
      'another host to take the lead',
      200,
    );
    await w.start(Number(leader.replace('host-', '')));
    await eventually(
      () => (postsBy(w.bots).some((h) => h !== leader) ? true : undefined),
      30_000,
      'a post by another host',
      200,
    );
    const after = statsRequests(w.emu).slice(before);
    const takeover = (after[0]?.at ?? 0) - killedAt;
    console.log(
      `hosts: leader ${leader} killed; ${after.length} post(s) since, the first by another host ${takeover} ms later`,
    );
    // The lease (15 s) and a renewal (5 s), then the next tick; or, when the killed host came back
    // first, until its shards are ready again (nothing is posted without them).
    expect(takeover).toBeLessThan(60_000);
    // Never two posts closer than the interval (less its tolerance), whichever host posted.
    const all = statsRequests(w.emu).map((r) => r.at);
    const gaps = all.slice(1).map((at, i) => at - (all[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS - 350);
    expect(w.emu.requests.filter((r) => r.status === 429)).toEqual([]);
  }, 180_000);

  it('a leader frozen (SIGSTOP) past its lease does not post when it wakes (SIGCONT)', async ({
    expect,
    onTestFinished,
  }) => {
    const w = await threeHosts(onTestFinished);
    await Promise.all([0, 1, 2].map((i) => w.start(i)));
    await eventually(() => (postsBy(w.bots).length >= 1 ? true : undefined), 20_000, 'a first stats post');
    const leader = postsBy(w.bots)[0] as string;
    const frozen = w.bots.find((b) => b.name === leader) as BotProcess;
    frozen.kill('SIGSTOP');
    const frozenAt = Date.now();
    // Frozen past its lease: another host takes the lead. Then the frozen one wakes.
    await eventually(
      () => (w.bots.some((b) => b.name !== leader && leads(b)) ? true : undefined),
      30_000,
      'another host to take the lead while the leader is frozen',
      200,
    );
    console.log(`hosts: leader ${leader} frozen; another host leads ${Date.now() - frozenAt} ms later`);
    const postsBefore = postsBy(w.bots).filter((h) => h === leader).length;
    frozen.kill('SIGCONT');
    await eventually(
      () => (postsBy(w.bots).some((h) => h !== leader) ? true : undefined),
      30_000,
      'a post by the new leader',
      200,
    );
    // Two intervals after waking, it has posted nothing more, and it says it lost the lead.
    await sleep(2 * INTERVAL_MS + 500);
    expect(postsBy(w.bots).filter((h) => h === leader).length).toBe(postsBefore);
    expect(frozen.entries().some((e) => e.msg === 'this host no longer leads the statistics posts')).toBe(
      true,
    );
    const all = statsRequests(w.emu).map((r) => r.at);
    const gaps = all.slice(1).map((at, i) => at - (all[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS - 350);
    expect(w.emu.requests.filter((r) => r.status === 429)).toEqual([]);
  }, 180_000);

  it("a host killed and not back: the others answer its /up in flight and send its servers' reminders due meanwhile, each once", async ({
    expect,
    onTestFinished,
  }) => {
    const w = await threeHosts(onTestFinished, undefined, { HOST_GONE_AFTER: `${GONE_AFTER_MS / 1000}s` });
    await Promise.all([0, 1, 2].map((i) => w.start(i)));
    const store = await openStore(w.place.options);
    onTestFinished(() => store.close());
    const settings = new SettingsRepository(store);
    const reminders = new ReminderRepository(store);
    const guilds = w.guilds;

    // An /up on a server of host-0 (shard 0), which the directory carries out but holds its answer
    // of: host-0 dies before it learns of the up, however long the steps below take.
    const upGuild = w.guildIds.find((id) => shardForGuild(id, SHARD_COUNT) === 0) as string;
    w.emu.faults.add({ kind: 'late-answer', ms: 60_000, method: 'POST', path: /^\/server$/, times: 1 });
    const up = w.discord.sendCommand({ guildId: upGuild, name: 'up', user: someone() });
    await eventually(
      () => w.emu.requests.find((r) => r.method === 'POST' && r.path === '/v2/server' && r.body !== ''),
      15_000,
      'the directory to receive the up',
    );

    // Two servers of every shard with reminders on, due 3 s after the kill: host-0's fall due
    // while it is gone, the others' while the hosts notice it.
    const reminded = [0, 1, 2, 3, 4, 5].flatMap((shard) =>
      w.guildIds.filter((id) => id !== upGuild && shardForGuild(id, SHARD_COUNT) === shard).slice(0, 2),
    );
    const now = Date.now();
    const dueAt = now + 3_000;
    const channelOf = (guildId: string) => guilds.get(guildId)?.channels[0]?.id as string;
    for (const guildId of reminded) {
      await settings.update(guildId, { reminderChannelId: channelOf(guildId) }, now);
      await reminders.scheduleGuild(guildId, { dueAt, nextUpAt: dueAt }, now);
    }
    const killed = w.bots[0] as BotProcess;
    killed.kill('SIGKILL');
    const killedAt = Date.now();
    await withTimeout(killed.exited, 5_000, 'host-0 to die');

    // The person who typed /up gets an answer, from one of the other hosts.
    await up.waitFor(isFinalAnswer, 45_000);
    const answeredIn = Date.now() - killedAt;
    const adopters = w.bots.filter((b) =>
      b.entries().some((e) => e.msg === 'answering the ups in flight of a host that is gone'),
    );
    expect(adopters.map((b) => b.name)).toHaveLength(1);
    expect(adopters[0]?.name).not.toBe('host-0');
    // As after a restart: the directory's answer now, in a message of its own.
    const view = up.view();
    const answer = view.original?.deleted ? view.followUps.at(-1) : view.original;
    expect(JSON.stringify(answer?.embeds ?? [])).toContain(
      "The bot restarted while raising this server; this is the directory's answer now.",
    );

    // Every reminder sent once, none early; host-0's name their server, though no live host has it cached.
    await eventually(
      () => (reminded.every((id) => w.discord.channelMessages(channelOf(id)).length >= 1) ? true : undefined),
      45_000,
      'every reminder to be posted',
      200,
    );
    const lastAt = Math.max(...reminded.map((id) => w.discord.channelMessages(channelOf(id))[0]!.receivedAt));
    console.log(
      `hosts: host-0 killed; its /up answered by ${adopters[0]?.name} ${answeredIn} ms later; ` +
        `12 reminders due 3 s after the kill, the last posted ${lastAt - killedAt} ms after it`,
    );
    await sleep(1_500);
    for (const guildId of reminded) {
      const messages = w.discord.channelMessages(channelOf(guildId));
      expect(messages, `the reminders of ${guildId}`).toHaveLength(1);
      expect(messages[0]!.receivedAt).toBeGreaterThanOrEqual(dueAt);
      expect(messages[0]!.text).toContain(`**${guilds.get(guildId)?.name}**`);
      expect((await reminders.getGuild(guildId))?.state).toBe('sent');
    }
    expect(w.emu.requests.filter((r) => r.status === 429)).toEqual([]);
  }, 180_000);

  it("refuses to start a host that would use up the day's gateway sessions, in one line", async ({
    expect,
  }) => {
    const store = await freshPlace('postgres');
    const discord = await startDiscordStandIn({
      shards: SHARD_COUNT,
      guilds: guildSet(6).guilds,
      token: discordLikeToken(),
      sessionStartLimit: 1,
    });
    try {
      const bot = new BotProcess(
        'main.js',
        {
          DISCORD_TOKEN: discord.token,
          DISCORD_API_URL: discord.restUrl,
          LOG_LEVEL: 'info',
          ...store.env,
          SHARD_COUNT: String(SHARD_COUNT),
          SHARD_IDS: '0-1',
          HOST_ID: 'host-0',
        },
        'host-0',
      );
      const exit = await withTimeout(bot.exited, 25_000, 'the host to exit');
      expect(exit.code).toBe(1);
      expect(bot.stderr.trim()).toBe(
        'Discord allows 1 more gateway identifies of 1 until its budget resets in 24 h; ' +
          'this process needs 2 to start its shards: not starting',
      );
      expect(discord.gatewayLog.filter((e) => e.kind === 'identify')).toEqual([]);
    } finally {
      await discord.close();
      await store.remove();
    }
  }, 45_000);

  it('lose PostgreSQL for 6 s and get it back: nothing posted meanwhile, no 429, the /up answered, posts resume', async ({
    expect,
    onTestFinished,
  }) => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 });
    onTestFinished(() => proxy.close());
    const w = await threeHosts(onTestFinished, `postgres://root@127.0.0.1:${proxy.port}/test`);
    await Promise.all([0, 1, 2].map((i) => w.start(i)));
    await eventually(
      () => (statsRequests(w.emu).length >= 1 ? true : undefined),
      20_000,
      'a first stats post',
    );
    proxy.cut();
    const cutAt = Date.now();
    // An /up while the database is gone: its turn at the shared limits waits for the database.
    const guildId = w.guildIds.find((id) => shardForGuild(id, SHARD_COUNT) === 3) as string;
    const up = w.discord.sendCommand({ guildId, name: 'up', user: someone() });
    await sleep(6_000);
    proxy.restore();
    const restoredAt = Date.now();
    const edited = (r: { method: string; path: string; status: number }) =>
      r.method === 'PATCH' && r.path.endsWith('/messages/@original') && r.status === 200;
    await up.waitFor(edited, 20_000);
    await eventually(
      () => (statsRequests(w.emu).some((r) => r.at > restoredAt) ? true : undefined),
      25_000,
      'a stats post once the database is back',
    );
    const stats = statsRequests(w.emu);
    // A post already on its way when the cut came may land in its first moments; none after.
    expect(stats.filter((r) => r.at > cutAt + 1_000 && r.at < restoredAt)).toEqual([]);
    const gaps = stats.slice(1).map((r, i) => r.at - (stats[i] as { at: number }).at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS - 350);
    expect(w.emu.requests.filter((r) => r.status === 429)).toEqual([]);
    const ups = w.emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server'));
    expect(ups.map((r) => r.status)).toEqual([200]);
    // Every host lived through it: /readyz answers on each.
    for (const bot of w.bots) expect(bot.exit).toBeUndefined();
  }, 180_000);
});

/**
 * Gateway sessions that outlive the process (src/gateway/gateway-sessions.ts), as an operator's
 * deploy meets them: the built main.js with 4 shards against the stand-in, stopped and started
 * again on the same store.
 *
 * - SIGTERM, then a new process: every shard RESUMEs (0 IDENTIFY), the guilds are there before
 *   any GUILD_CREATE (the snapshot), an /up sent while no process was connected is deferred within
 *   Discord's 3 s and answered, and a guild joined meanwhile is seen once.
 * - kill -9 (PostgreSQL): the next process resumes from the last save.
 * - A session Discord dropped meanwhile: the shards identify after all, and a guild left while
 *   the bot was down is a leave (its settings go).
 * The gaps with no shard connected are printed here; the bench measures them (scenario 11).
 */
import { describe, it, type onTestFinished } from 'vitest';
import { GatewaySessionRepository, openStore, SettingsRepository } from '../../src/store/index.js';
import {
  commandOption,
  type DiscordStandIn,
  type GatewayLogEntry,
  makeGuild,
  snowflake,
} from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { isHandled } from '../support/rig.js';
import { tempDir } from '../support/temp.js';
import {
  type BotProcess,
  bodyOf,
  eventually,
  httpGet,
  START_BOUND_MS,
  sample,
  sleep,
  startedReady,
  statsRequests,
  withTimeout,
} from './helpers.js';
import { world } from './world.js';

const SHARDS = 4;
const GUILDS = 40;

/** The world of world.ts with 4 shards and 40 guilds, and a data directory every process shares. */
async function sessionsWorld(finished: typeof onTestFinished, postgres = false) {
  const w = await world(finished, { shards: SHARDS, guilds: GUILDS, postgres });
  const data = tempDir('sessions');
  finished(() => data.remove());
  const env = { SHARD_COUNT: String(SHARDS), STATS_INTERVAL: '15m', DATA_DIR: data.path };
  return {
    ...w,
    dataDir: data.path,
    spawn: (extra: Record<string, string> = {}) => w.spawn('main.js', { ...env, ...extra }),
  };
}

const someone = () => ({ id: snowflake(), username: `s_${Math.random().toString(36).slice(2, 8)}` });
const entriesOf = (discord: DiscordStandIn, kind: GatewayLogEntry['kind'], after = 0) =>
  discord.gatewayLog.filter((e) => e.kind === kind && e.at >= after);

/** Every shard resumed after `after`; resolves with the entries. */
function allResumed(discord: DiscordStandIn, after: number): Promise<GatewayLogEntry[]> {
  return eventually(
    () => {
      const resumed = entriesOf(discord, 'resumed', after);
      return new Set(resumed.map((e) => e.shardId)).size === SHARDS ? resumed : undefined;
    },
    START_BOUND_MS,
    'every shard to resume',
  );
}

/** Per shard, from the old connection's close to the new session's RESUMED (ms). */
function gaps(discord: DiscordStandIn, closedAfter: number, resumed: GatewayLogEntry[]): number[] {
  return resumed
    .map((r) => {
      const close = entriesOf(discord, 'close', closedAfter).find((c) => c.shardId === r.shardId);
      return Math.round(r.at - (close?.at ?? Number.NaN));
    })
    .sort((a, b) => a - b);
}

async function metricsOf(bot: BotProcess): Promise<string> {
  return (await httpGet(await bot.opsPort(), '/metrics')).body;
}

describe.concurrent('gateway sessions across restarts', () => {
  const restart =
    'SIGTERM, then a new process: 4 shards resume with 0 identifies, guilds restored, an /up sent meanwhile answered, a join seen once';
  it(restart, async ({ expect, onTestFinished }) => {
    const w = await sessionsWorld(onTestFinished);
    const first = w.spawn();
    await startedReady(first);
    expect(entriesOf(w.discord, 'identify')).toHaveLength(SHARDS);

    const stoppedAt = performance.now();
    first.kill('SIGTERM');
    const exit = await withTimeout(first.exited, 10_000, 'main.js to exit after SIGTERM');
    expect(exit).toMatchObject({ code: 0, signal: null });
    // Closed keeping the sessions: 4200, as discord.js closes to resume, never 1000.
    const closes = entriesOf(w.discord, 'close', stoppedAt);
    expect(closes.map((c) => [c.by, c.code])).toEqual(Array(SHARDS).fill(['client', 4200]));

    // While no process is connected: the bot is added to a server.
    const joined = makeGuild({ id: snowflake(), name: 'Joined while down', memberCount: 77 });
    w.discord.addGuild(joined);

    // Its first statistics post comes a second after every shard is back.
    const second = w.spawn({ STATS_INTERVAL: '1h', STATS_FIRST_DELAY: '1s' });
    // An /up sent while the new process starts: its shards resume before the bot's modules have
    // loaded (early-resume.ts), so it is replayed to the gateway's thread or reaches it live; the
    // thread defers it either way and keeps it until the bot takes over.
    await second.opsPort();
    const user = someone();
    const up = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user });
    expect(['queued', 'sent']).toContain(up.delivery);
    const resumed = await allResumed(w.discord, stoppedAt);
    const gap = gaps(w.discord, stoppedAt, resumed);
    console.log(`restart (SIGTERM): no shard connected for ${gap.join(' / ')} ms per shard`);
    // The sessions were resumed by the entry point, before the bot's modules had loaded; a
    // look-up sent once they are back is deferred and answered as ever.
    const early = second
      .entries()
      .filter((e) => e.msg === 'resuming the saved gateway sessions while the bot loads');
    expect(early.map((e) => e.shards)).toEqual([[0, 1, 2, 3]]);
    const lookup = w.discord.sendCommand({
      guildId: IDS.serverFresh,
      name: 'bot',
      options: [commandOption.string('ref', 'kerdoku')],
    });
    expect(lookup.delivery).toBe('sent');

    expect(entriesOf(w.discord, 'identify')).toHaveLength(SHARDS);
    expect(entriesOf(w.discord, 'invalid_session')).toEqual([]);
    // Deferred within Discord's 3 s (the stand-in refuses a later one), then answered in full.
    const response = await up.firstResponse(3_000);
    expect(response.type).toBe(5);
    expect(response.at - up.sentAt).toBeLessThan(3_000);
    await eventually(
      () => (second.entries().some((e) => isHandled(e) && e.name === 'up') ? true : undefined),
      15_000,
      'the replayed /up to be handled',
    );
    const handled = second.entries().filter((e) => isHandled(e) && e.name === 'up');
    expect(handled.map((e) => e.outcome)).toEqual(['success']);
    const looked = await lookup.firstResponse(3_000);
    expect(looked.at - lookup.sentAt).toBeLessThan(3_000);
    await eventually(
      () => (second.entries().some((e) => isHandled(e) && e.name === 'bot') ? true : undefined),
      15_000,
      'the look-up to be handled',
    );
    expect(
      second
        .entries()
        .filter((e) => isHandled(e) && e.name === 'bot')
        .map((e) => e.outcome),
    ).toEqual(['shown']);
    // The up reached the directory once; the join was reported once (a POST without `up`).
    const posts = w.emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server'));
    const bodies = posts.map((r) => JSON.parse(r.body) as { up?: number });
    expect(bodies.filter((b) => b.up === 1)).toHaveLength(1);
    expect(bodies.filter((b) => b.up !== 1)).toHaveLength(1);

    // The join is seen once, by the new process; the guilds before it came from the snapshot.
    const joins = [...first.entries(), ...second.entries()].filter((e) => e.msg === 'joined a guild');
    expect(joins.map((e) => e.guildId)).toEqual([joined.id]);
    // What the directory is told counts the servers of the snapshot, available, and the new one.
    const stats = await eventually(
      () => statsRequests(w.emu).find((r) => r.status === 200),
      15_000,
      "the new process's statistics post",
    );
    expect(bodyOf(stats)).toMatchObject({ servers: GUILDS + 1, shards: SHARDS });
    const metrics = await metricsOf(second);
    expect(sample(metrics, 'discord_guilds')).toBe(GUILDS + 1);
    for (let shard = 0; shard < SHARDS; shard++) {
      expect(
        sample(metrics, 'discord_gateway_sessions_total', { shard: String(shard), kind: 'resumed' }),
      ).toBe(1);
      expect(
        sample(metrics, 'discord_gateway_sessions_total', { shard: String(shard), kind: 'identified' }) ?? 0,
      ).toBe(0);
    }
    // Said once every shard had resumed, not when the guilds were restored.
    const connected = second.entries().filter((e) => e.msg === 'connected to Discord');
    expect(connected).toHaveLength(1);
    expect(connected[0]?.guilds).toBeGreaterThanOrEqual(GUILDS);
    expect(second.entries().filter((e) => (e.level ?? 0) >= 50)).toEqual([]);
  }, 120_000);

  it.skipIf(!HAS_POSTGRES)(
    'kill -9 (PostgreSQL): the next process resumes from the last save, with the guilds',
    async ({ expect, onTestFinished }) => {
      const w = await sessionsWorld(onTestFinished, true);
      const first = w.spawn();
      await startedReady(first);
      // Saved every 5 s: wait until the store has all four sessions.
      if (!w.store) throw new Error('a PostgreSQL place was asked for');
      const store = await openStore(w.store.options);
      onTestFinished(() => store.close());
      const sessions = new GatewaySessionRepository(store);
      const ids = [...Array(SHARDS).keys()];
      await eventually(
        async () =>
          (await sessions.load(ids, SHARDS, 60_000, Date.now())).size === SHARDS ? true : undefined,
        15_000,
        'the four sessions to be saved',
      );
      // An /up answered after that save, then the kill before the next: Discord replays it to the
      // next process, which must not up the server again.
      const up = w.discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user: someone() });
      expect((await up.firstResponse(3_000)).type).toBe(5);
      await eventually(
        () => (first.entries().some((e) => isHandled(e) && e.name === 'up') ? true : undefined),
        10_000,
        'the /up to be handled',
      );
      const killedAt = performance.now();
      first.kill('SIGKILL');
      await withTimeout(first.exited, 10_000, 'the killed bot to exit');

      const second = w.spawn();
      const resumed = await allResumed(w.discord, killedAt);
      console.log(
        `restart (kill -9): no shard connected for ${gaps(w.discord, killedAt, resumed).join(' / ')} ms per shard`,
      );
      expect(entriesOf(w.discord, 'identify')).toHaveLength(SHARDS);
      await startedReady(second);
      expect(sample(await metricsOf(second), 'discord_guilds')).toBe(GUILDS);
      // The guilds came back from the snapshot: none was announced as a join.
      expect(second.entries().filter((e) => e.msg === 'joined a guild')).toEqual([]);
      // The /up came again (replayed from the save's sequence): its deferral was refused as already
      // acknowledged, and nothing ran.
      await eventually(
        () =>
          w.discord.requests.some((r) => r.path.includes(`/interactions/${up.id}/`) && r.status === 400)
            ? true
            : undefined,
        10_000,
        'the replayed deferral to be refused',
      );
      await sleep(1_000);
      const upPosts = w.emu.requests.filter(
        (r) =>
          r.method === 'POST' &&
          r.path.startsWith('/v2/server') &&
          (JSON.parse(r.body) as { up?: number }).up === 1,
      );
      expect(upPosts).toHaveLength(1);
      expect(
        second
          .entries()
          .filter((e) => isHandled(e))
          .map((e) => e.outcome),
      ).toEqual(['unanswered']);
    },
    120_000,
  );

  it('a session Discord dropped meanwhile: the shards identify, and a guild left while down is a leave', async ({
    expect,
    onTestFinished,
  }) => {
    const w = await sessionsWorld(onTestFinished);
    const first = w.spawn();
    await startedReady(first);
    const left = w.guildIds.find((id) => id !== IDS.serverFresh) as string;
    const settingsStore = await openStore({ dataDir: w.dataDir });
    const settings = new SettingsRepository(settingsStore);
    onTestFinished(() => settingsStore.close());
    await settings.update(left, { reminderChannelId: snowflake() }, Date.now());

    const stoppedAt = performance.now();
    first.kill('SIGTERM');
    await withTimeout(first.exited, 10_000, 'main.js to exit after SIGTERM');
    await eventually(
      () => (w.discord.connectedShards().length === 0 ? true : undefined),
      10_000,
      'the stand-in to see the connections close',
    );
    // The bot is removed from a server, then Discord drops the sessions (too old to resume).
    w.discord.removeGuild(left);
    expect(w.discord.expireDroppedSessions()).toBe(SHARDS);

    const second = w.spawn();
    await startedReady(second);
    expect(entriesOf(w.discord, 'invalid_session', stoppedAt)).toHaveLength(SHARDS);
    expect(entriesOf(w.discord, 'identify', stoppedAt)).toHaveLength(SHARDS);
    const leaves = await eventually(
      () => {
        const found = second.entries().filter((e) => e.msg === 'left a guild');
        return found.length > 0 ? found : undefined;
      },
      10_000,
      'the leave to be noticed',
    );
    expect(leaves.map((e) => e.guildId)).toEqual([left]);
    await second.ready();
    expect(sample(await metricsOf(second), 'discord_guilds')).toBe(GUILDS - 1);
    expect(second.entries().filter((e) => e.msg === 'joined a guild')).toEqual([]);
    // Its settings went with it, as with a leave seen live.
    await eventually(
      async () => ((await settings.get(left)) === undefined ? true : undefined),
      10_000,
      'the settings to go',
    );
  }, 120_000);
});

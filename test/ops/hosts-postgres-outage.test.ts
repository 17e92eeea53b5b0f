/**
 * Issue 39, item 2, on several hosts: PostgreSQL unreachable for a minute in the middle of the
 * load. Three hosts of one bot (`node dist/src/app/main.js`, SHARD_COUNT=3, one shard each) reach
 * one PostgreSQL schema through a TCP proxy of the test's own, which is cut for CUT_MS (never the
 * shared server itself) and restored. Reminders of 20 servers fall due during the cut and just
 * after it; members press /up during it; every host's /metrics is sampled for who leads the
 * statistics posts. What must hold: every /up answered (its deferral within Discord's 3 s, then
 * the bot's own words, never the internal error), no two hosts leading at once, every reminder
 * posted exactly once within a minute of the store's return, and nothing of the refused ups sent
 * or recorded later. The test's time is the cut, the hosts' start-up and the catch-up.
 */
import { describe, it, type onTestFinished } from 'vitest';
import en from '../../src/i18n/locales/en-US.json' with { type: 'json' };
import { openStore, ReminderRepository, SettingsRepository, type Store } from '../../src/store/index.js';
import { type DiscordStandIn, isFinalAnswer, shardForGuild, snowflake } from '../discord/index.js';
import { adminQuery, TEST_DATABASE_URL } from '../store/places.js';
import { TcpProxy } from '../store/tcp-proxy.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { eventually, httpGet, sample, sleep } from './helpers.js';
import { type Hosts, hosts } from './hosts-world.js';

/** How long PostgreSQL is unreachable: the minute issue 39 (item 2) asks the bot to live through. */
const CUT_MS = 60_000;
/** Everything due must be posted within this long after the store's return (the minute). */
const CATCH_UP_MS = 60_000;
/** Discord's window for an interaction's first response. */
const DEFERRAL_MS = 3_000;
/**
 * An /up's final answer while the store is gone: its turn at the shared limits tries for 10 s
 * (shared-rate-limiter.ts, unreachableWaitMs) before it says the database is unreachable.
 */
const UP_ANSWER_MS = 15_000;
const SHARD_COUNT = 3;
const RANGES = ['0', '1', '2'];
const GUILDS = 30;
/** Servers whose reminders fall due during the cut, and just after it. */
const DUE_DURING = 16;
const DUE_AFTER = 4;
const INTERVAL_MS = 3_000;

interface OutageWorld extends Hosts {
  /** The TCP proxy every host reaches PostgreSQL through: cut, then restored. */
  proxy: TcpProxy;
  /** The hosts' schema opened directly, not through the proxy: what is really in the database. */
  direct: Store;
  channelOf(guildId: string): string;
}

/** Three hosts (one shard each) reaching PostgreSQL through a proxy of the test's own. */
async function outageWorld(finished: typeof onTestFinished): Promise<OutageWorld> {
  const target = new URL(TEST_DATABASE_URL);
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
  const viaProxy = new URL(TEST_DATABASE_URL);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  let direct: Store | undefined;
  const w = await hosts(finished, {
    shardCount: SHARD_COUNT,
    ranges: RANGES,
    guilds: GUILDS,
    statsIntervalMs: INTERVAL_MS,
    databaseUrl: viaProxy.toString(),
    // Whole again first, so that each host hands its shards over as it stops.
    beforeStop: () => proxy.restore(),
    afterStop: async () => {
      await direct?.close();
      await proxy.close();
    },
  });
  direct = await openStore({ ...w.place.options, databaseUrl: TEST_DATABASE_URL });
  return {
    ...w,
    proxy,
    direct,
    channelOf: (guildId) => w.guilds.get(guildId)?.channels[0]?.id as string,
  };
}

/** One look at every host's /metrics: which say they lead the statistics posts now. */
interface LeaderSample {
  at: number;
  leaders: string[];
  /** Hosts whose /metrics did not answer. */
  silent: string[];
}

async function sampleLeaders(ports: number[]): Promise<LeaderSample> {
  const at = Date.now();
  const answers = await Promise.all(
    ports.map((port, i) =>
      httpGet(port, '/metrics').then(
        (m) => sample(m.body, 'bot_stats_leader', { host: `host-${i}` }),
        () => undefined,
      ),
    ),
  );
  return {
    at,
    leaders: answers.flatMap((v, i) => (v === 1 ? [`host-${i}`] : [])),
    silent: answers.flatMap((v, i) => (v === undefined ? [`host-${i}`] : [])),
  };
}

const someone = () => ({ id: snowflake(), username: `o_${Math.random().toString(36).slice(2, 8)}` });

const isDeferral = (r: { method: string; path: string; status: number }) =>
  r.method === 'POST' && /^\/interactions\/\d+\/[^/]+\/callback/.test(r.path) && r.status < 300;

describe.skipIf(!HAS_POSTGRES)('three hosts, PostgreSQL unreachable for a minute (issue 39, item 2)', () => {
  it('keep answering /up, never lead two at once, and post every reminder due meanwhile exactly once within a minute of its return', async ({
    expect,
    onTestFinished,
  }) => {
    const w = await outageWorld(onTestFinished);
    const ports = await Promise.all([0, 1, 2].map(async (i) => (await w.start(i)).port));
    await eventually(
      async () => ((await sampleLeaders(ports)).leaders.length === 1 ? true : undefined),
      20_000,
      'exactly one host leading',
      250,
    );

    // Every shard's servers: 20 with reminders, 2 of each shard for the /ups (never both).
    const byShard = [0, 1, 2].map((s) => w.guildIds.filter((id) => shardForGuild(id, SHARD_COUNT) === s));
    const upGuilds = byShard.flatMap((ids) => ids.slice(0, 2));
    const reminded = w.guildIds.filter((id) => !upGuilds.includes(id)).slice(0, DUE_DURING + DUE_AFTER);
    expect(reminded).toHaveLength(DUE_DURING + DUE_AFTER);
    const settings = new SettingsRepository(w.direct);
    const reminders = new ReminderRepository(w.direct);
    const plannedCut = Date.now() + 2_000;
    // During the cut: from 2 s in to 5 s before its end; after it: 2 to 8 s after the return.
    const dueOf = new Map(
      reminded.map((id, i) => [
        id,
        i < DUE_DURING
          ? plannedCut + 2_000 + Math.round((i * (CUT_MS - 7_000)) / (DUE_DURING - 1))
          : plannedCut + CUT_MS + 2_000 * (i - DUE_DURING + 1),
      ]),
    );
    const now = Date.now();
    for (const guildId of reminded) {
      const dueAt = dueOf.get(guildId) as number;
      await settings.update(guildId, { reminderChannelId: w.channelOf(guildId) }, now);
      await reminders.scheduleGuild(guildId, { dueAt, nextUpAt: dueAt }, now);
    }

    // Who leads, every second from now to the end: never two hosts at once.
    const samples: LeaderSample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await sampleLeaders(ports));
        await sleep(1_000);
      }
    })();
    onTestFinished(async () => {
      sampling = false;
      await sampler;
    });

    await sleep(Math.max(0, plannedCut - Date.now()));
    w.proxy.cut();
    const cutAt = Date.now();
    expect(cutAt).toBeLessThan(Math.min(...dueOf.values()));

    // Members press /up during the cut, on every host: 5 s in and 30 s in.
    const ups: Array<{ guildId: string; handle: ReturnType<DiscordStandIn['sendCommand']> }> = [];
    const answered: Array<Promise<{ deferralMs: number; answerMs: number; text: string }>> = [];
    for (const [round, offset] of [5_000, 30_000].entries()) {
      await sleep(Math.max(0, cutAt + offset - Date.now()));
      for (const shard of [0, 1, 2]) {
        const guildId = byShard[shard]?.[round] as string;
        const handle = w.discord.sendCommand({ guildId, name: 'up', user: someone() });
        ups.push({ guildId, handle });
        answered.push(
          (async () => {
            const deferral = await handle.waitFor(isDeferral, DEFERRAL_MS + 2_000);
            const answer = await handle.waitFor(isFinalAnswer, UP_ANSWER_MS + 5_000);
            const view = handle.view();
            return {
              deferralMs: Math.round(deferral.at - handle.sentAt),
              answerMs: Math.round(answer.at - handle.sentAt),
              text: JSON.stringify([view.original?.embeds ?? [], view.followUps.map((f) => f.embeds ?? [])]),
            };
          })(),
        );
      }
    }
    const answers = await Promise.all(answered);
    await sleep(Math.max(0, cutAt + CUT_MS - Date.now()));
    const duringCut = samples.filter((s) => s.at >= cutAt);
    w.proxy.restore();
    const restoredAt = Date.now();

    // Every /up of the cut: a deferral within Discord's window, then the bot's own words.
    for (const answer of answers) {
      expect(answer.deferralMs).toBeLessThanOrEqual(DEFERRAL_MS);
      expect(answer.answerMs).toBeLessThanOrEqual(UP_ANSWER_MS);
      expect(answer.text).not.toContain(en.errors.internal);
      // "…cannot reach its database right now, so the directory was not asked" (or the store's own words).
      expect(
        [en.errors.limitsUnavailable, en.errors.storeUnavailable].some((t) => answer.text.includes(t)),
      ).toBe(true);
    }

    // Every reminder due posted, each recorded as sent, within the minute after the return.
    await eventually(
      async () => {
        for (const guildId of reminded) {
          if (w.discord.channelMessages(w.channelOf(guildId)).length === 0) return undefined;
          if ((await reminders.getGuild(guildId))?.state !== 'sent') return undefined;
        }
        return true;
      },
      CATCH_UP_MS + 10_000,
      'every reminder posted and recorded as sent',
      250,
    );
    const caughtUpAt = Date.now();
    // And none twice, a while later.
    await sleep(5_000);
    sampling = false;
    await sampler;

    const firstPostAt = (guildId: string) =>
      w.discord.channelMessages(w.channelOf(guildId))[0]?.receivedAt as number;
    for (const guildId of reminded) {
      const messages = w.discord.channelMessages(w.channelOf(guildId));
      expect(messages, `the reminders posted in ${guildId}'s channel`).toHaveLength(1);
      expect(messages[0]!.receivedAt).toBeGreaterThanOrEqual(dueOf.get(guildId) as number);
      expect((await reminders.getGuild(guildId))?.state).toBe('sent');
    }
    const during = reminded.slice(0, DUE_DURING);
    const after = reminded.slice(DUE_DURING);
    const lastDuring = Math.max(...during.map(firstPostAt)) - restoredAt;
    const lateAfter = after.map((id) => firstPostAt(id) - (dueOf.get(id) as number));
    expect(lastDuring).toBeLessThan(CATCH_UP_MS);
    for (const late of lateAfter) expect(late).toBeLessThan(CATCH_UP_MS);

    // The ups of the cut were refused before the directory was asked: none sent or recorded later.
    const upPosts = w.emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server'));
    expect(upPosts.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([]);
    const schema = w.place.name;
    const history = await adminQuery<{ n: string }>(
      `select count(*) as n from "${schema}".up_history where guild_id = any($1)`,
      [upGuilds],
    );
    expect(Number(history[0]?.n)).toBe(0);
    const journal = await adminQuery<{ n: string }>(`select count(*) as n from "${schema}".pending_ups`);
    expect(Number(journal[0]?.n)).toBe(0);

    // Never two leaders at once; one again once the store is back; every host alive.
    const twoAtOnce = samples.filter((s) => s.leaders.length > 1);
    expect(twoAtOnce).toEqual([]);
    expect(samples.at(-1)?.leaders).toHaveLength(1);
    for (const bot of w.bots) expect(bot.exit, `${bot.name} still running`).toBeUndefined();

    const leadersSeen = (list: LeaderSample[]) =>
      [...new Set(list.map((s) => s.leaders.join('+') || 'none'))].join(', ');
    const afterRestore = samples.filter((s) => s.at >= restoredAt);
    const firstLeaderBack = afterRestore.find((s) => s.leaders.length === 1);
    const lastLedInCut = duringCut.filter((s) => s.leaders.length > 0).at(-1);
    const adopted = w.bots.flatMap((b) =>
      b
        .entries()
        .filter((e) => e.msg === 'answering the ups in flight of a host that is gone')
        .map(() => b.name),
    );
    console.log(
      [
        `hosts-postgres-outage: cut ${CUT_MS} ms; /up during it: deferrals ${answers.map((a) => a.deferralMs).join(', ')} ms, ` +
          `answers ${answers.map((a) => a.answerMs).join(', ')} ms`,
        `  reminders: ${DUE_DURING} due during the cut, the last posted ${lastDuring} ms after the return; ` +
          `${DUE_AFTER} due after it, posted ${lateAfter.join(', ')} ms late; all recorded sent ${caughtUpAt - restoredAt} ms after the return`,
        `  leadership: ${samples.length} samples (${duringCut.length} during the cut: ${leadersSeen(duringCut)}; ` +
          `after: ${leadersSeen(afterRestore)}), a leader seen until ${lastLedInCut ? lastLedInCut.at - cutAt : '-'} ms into the cut, one leader again ${firstLeaderBack ? firstLeaderBack.at - restoredAt : '?'} ms after the return; ` +
          `samples with a host not answering: ${samples.filter((s) => s.silent.length > 0).length}`,
        `  ups adopted from hosts taken for gone: ${adopted.length === 0 ? 'none' : adopted.join(', ')}`,
      ].join('\n'),
    );
  }, 240_000);
});

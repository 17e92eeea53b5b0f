/**
 * Three hosts of one bot (`node dist/src/app/main.js`, two of six shards each) on one PostgreSQL
 * schema, against the Discord stand-in enforcing Discord's global limit for the bot's token, 50
 * requests a second, whichever host sends them. Every server's reminder falls due at once, so each
 * host posts its servers' reminders at its own 50 a second: 150 a second together.
 *
 * Through the REST proxy (`node dist/src/app/rest-proxy.js`, @discordjs/proxy, DISCORD_REST_PROXY_URL
 * on every host), the three keep one limit: no 429, every reminder posted once. Without it (the
 * control, same load), the stand-in answers 429s: the test can fail.
 */
import { describe, type ExpectStatic, it, type onTestFinished } from 'vitest';
import { openStore, ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';
import { describeViolations } from '../discord/spec/conformance.js';
import { type Emulator, startEmulator, TOKENS } from '../emulator/index.js';
import { freshPlace } from '../store/places.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import {
  BotProcess,
  discordLikeToken,
  eventually,
  guildSet,
  hostEnv,
  leaksIn,
  sleep,
  startedReady,
  startRestProxy,
} from './helpers.js';

const SHARD_COUNT = 6;
const RANGES = ['0-1', '2-3', '4-5'];
/** One reminder each: 300 posts, six seconds of the global limit, two at the three hosts' pace. */
const GUILDS = 300;
/** Every host looks at the store every 10 s (the outbox's poll): by then each has the reminders in view. */
const DUE_AFTER_MS = 11_000;

interface Run {
  /** Global 429s the stand-in answered. */
  limited: number;
  /** From the due time to the last reminder posted. */
  postedInMs: number;
  /** Requests with the bot's token the stand-in counted. */
  counted: number;
}

/** Three hosts, with or without the proxy; every server's reminder due at once; each posted once. */
async function remindersAtOnce(
  finished: typeof onTestFinished,
  expect: ExpectStatic,
  throughProxy: boolean,
): Promise<Run> {
  const place = await freshPlace('postgres');
  const emu: Emulator = await startEmulator({});
  const set = guildSet(GUILDS);
  const discord: DiscordStandIn = await startDiscordStandIn({
    shards: SHARD_COUNT,
    guilds: set.guilds,
    token: discordLikeToken(),
    maxConcurrency: 16,
    globalRateLimit: { max: 50, windowMs: 1_000 },
  });
  const processes: BotProcess[] = [];
  finished(async () => {
    const problems: string[] = [];
    for (const child of processes) {
      await child
        .destroy()
        .catch((err: unknown) => problems.push(`cleanup of pid ${child.pid}: ${String(err)}`));
      if (
        leaksIn([{ where: child.name, text: child.output() }], [discord.token, TOKENS.serviceBot]).length > 0
      ) {
        problems.push(`a token appears in the output of ${child.name}`);
      }
    }
    if (discord.specViolations().length > 0) problems.push(describeViolations(discord.specViolations()));
    await discord.close();
    await emu.close();
    await place.remove();
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }, 30_000);

  let proxyEnv: Record<string, string> = {};
  if (throughProxy) {
    const started = await startRestProxy(discord.restUrl);
    processes.push(started.proxy);
    proxyEnv = started.env;
  }
  const bots = RANGES.map(
    (range, i) =>
      new BotProcess(
        'main.js',
        hostEnv({
          discord,
          directoryUrl: emu.url,
          directoryToken: TOKENS.serviceBot,
          store: place.env,
          shardCount: SHARD_COUNT,
          shardIds: range,
          hostId: `host-${i}`,
          statsIntervalMs: 60_000,
          extra: proxyEnv,
        }),
        `host-${i}`,
      ),
  );
  processes.push(...bots);
  await Promise.all(bots.map((bot) => startedReady(bot)));

  const store = await openStore(place.options);
  finished(() => store.close());
  const settings = new SettingsRepository(store);
  const reminders = new ReminderRepository(store);
  const channelOf = new Map(set.guilds.map((g) => [g.id, g.channels[0]?.id as string]));
  const now = Date.now();
  const dueAt = now + DUE_AFTER_MS;
  for (const [guildId, channelId] of channelOf) {
    await settings.update(guildId, { reminderChannelId: channelId }, now);
    await reminders.scheduleGuild(guildId, { dueAt, nextUpAt: dueAt }, now);
  }
  const limitedBefore = discord.globalRateLimited();

  const posted = () => [...channelOf.values()].filter((id) => discord.channelMessages(id).length >= 1).length;
  await eventually(
    () => (posted() === GUILDS ? true : undefined),
    DUE_AFTER_MS + 45_000,
    `every one of the ${GUILDS} reminders to be posted`,
    200,
  ).catch((err: unknown) => {
    // What went wrong, from the stand-in's side and from every process's warnings.
    const warnings = processes.flatMap((child) =>
      child
        .entries()
        .filter((e) => e.level >= 40)
        .slice(-5)
        .map((e) => `${child.name}: ${JSON.stringify(e)}`),
    );
    const statuses = new Map<number, number>();
    for (const r of discord.requests) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    throw new Error(
      `${String(err)}; ${posted()} of ${GUILDS} posted, ${discord.globalRateLimited()} × 429; ` +
        `the stand-in's answers by status: ${JSON.stringify([...statuses])}\n${warnings.join('\n')}`,
    );
  });
  const lastAt = Math.max(...[...channelOf.values()].map((id) => discord.channelMessages(id)[0]!.receivedAt));
  // Nothing posted twice, by any host.
  await sleep(1_000);
  for (const [guildId, channelId] of channelOf) {
    expect(discord.channelMessages(channelId), `the reminders of ${guildId}`).toHaveLength(1);
    expect(discord.channelMessages(channelId)[0]!.receivedAt).toBeGreaterThanOrEqual(dueAt);
  }
  // The load came from all three: each host posts its own shards' servers' reminders (another's
  // only once that host is gone, HOST_GONE_AFTER, 60 s), and every server's was posted.
  return {
    limited: discord.globalRateLimited() - limitedBefore,
    postedInMs: lastAt - dueAt,
    counted: discord.globalCounted(),
  };
}

describe.skipIf(!HAS_POSTGRES)('three hosts and Discord’s global limit', () => {
  it(`through the REST proxy: ${GUILDS} reminders due at once on three hosts, no 429, each posted once`, async ({
    expect,
    onTestFinished,
  }) => {
    const run = await remindersAtOnce(onTestFinished, expect, true);
    console.log(
      `rest proxy: ${GUILDS} reminders on 3 hosts through the proxy posted within ${run.postedInMs} ms of ` +
        `their due time, ${run.limited} × 429 (${run.counted} requests with the token counted)`,
    );
    expect(run.limited).toBe(0);
    // 300 posts at 50 a second: the proxy held them to the limit (the hosts alone take 2 s).
    expect(run.postedInMs).toBeGreaterThanOrEqual(4_000);
  }, 180_000);

  it(`control, without the proxy: the same ${GUILDS} reminders on three hosts get 429s from the stand-in`, async ({
    expect,
    onTestFinished,
  }) => {
    const run = await remindersAtOnce(onTestFinished, expect, false);
    console.log(
      `rest proxy control: ${GUILDS} reminders on 3 hosts without the proxy posted within ${run.postedInMs} ms ` +
        `of their due time, ${run.limited} × 429 (${run.counted} requests with the token counted)`,
    );
    expect(run.limited).toBeGreaterThan(0);
  }, 180_000);
});

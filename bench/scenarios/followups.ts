/**
 * Scenario 13: a reminder's follow-through. The built bot (`node dist/src/app/main.js`, one shard,
 * SQLite in a fresh DATA_DIR) against the Discord stand-in (Discord's global limit on) and the
 * directory emulator (a 6 s cooldown, its limits raised out of the way, as in scenario 2). Each of
 * N servers turns its reminders on in a channel of its own (`/settings reminders channel:` by a
 * member with Manage Server); a first /up in each (spread over 2 s) sets its reminder to the
 * directory's next-up time, 6 s later, and the bot posts it. Once every server's reminder is
 * posted, a second /up in each (spread over 2 s, each by a member of its own) takes the reminder,
 * and the bot edits it to say "✅ Upped by @member N s after the reminder"
 * (src/features/reminders/followups.ts).
 *
 * Per server: from the /up's final answer (the accepted PATCH of @original, or its follow-up
 * message, as the stand-in recorded it) to the accepted PATCH of the posted reminder at the
 * stand-in, both on the stand-in's clock (target p99 ≤ 1 s); the reminder edited exactly once
 * (target: every server); the 429s of the stand-in's global limit (target 0).
 */
import {
  commandOption,
  DISCORD_GLOBAL_LIMIT,
  type DiscordStandIn,
  type GuildFixture,
  type InteractionHandle,
  isFinalAnswer,
  makeGuilds,
  Permission,
  type PostedMessage,
  type RecordedRestRequest,
  snowflake,
  startDiscordStandIn,
} from '../../test/discord/index.js';
import { type Emulator, startEmulator } from '../../test/emulator/index.js';
import {
  BotProcess,
  discordLikeToken,
  eventually,
  START_BOUND_MS,
  startedReady,
} from '../../test/ops/helpers.js';
import { botEnv } from '../../test/ops/world.js';
import { tempDir } from '../../test/support/temp.js';
import { size } from '../lib/env.js';
import { atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { sleep, summarize } from '../lib/stats.js';

const SCENARIO = '13. Reminder follow-through';
/**
 * The directory's cooldown: the reminder falls due this long after the first /up. It is also the
 * window in which an up takes the reminder (store/followups.ts: an up later than the cooldown after
 * the post is the next window's), so it must outlast the wait for every server's reminder plus the
 * second /up's spread: at 3 s, the first servers' second /up came too late on a busy machine.
 */
const COOLDOWN_MS = 6_000;
/** Each round of commands (the settings, the first /up, the second /up) is spread over this. */
const SPREAD_MS = 2_000;
/** The target: the up answered → the reminder's edit at Discord, p99. */
const TARGET_MS = 1_000;
/** The directory's limits, and the client's, out of the way (scenario 2's). */
const RAISED = { max: 10_000, windowMs: 1_000 };
/** Start and ready on two busy cores. */
const START_MS = 2 * START_BOUND_MS;
/** A command's final answer. */
const ANSWER_MS = 20_000;
/** Every reminder posted, from the last first /up (the cooldown, and 50 posts a second). */
const POSTED_MS = COOLDOWN_MS + 20_000;
/** Every edit, from the last second /up. */
const EDITED_MS = 15_000;
/** After the last edit: a second edit of a reminder would come by then. */
const SETTLE_MS = 1_000;
/** The default reminder's words (en-US), not the confirmation's. */
const REMINDER_WORDS = 'can be raised again';

const MANAGER = Permission.ManageGuild | Permission.UseApplicationCommands;
const MEMBER = Permission.UseApplicationCommands;

const channelOf = (g: GuildFixture): string => (g.channels[0] as { id: string }).id;
const newUser = (prefix: string) => ({
  id: snowflake(),
  username: `${prefix}_${Math.random().toString(36).slice(2, 8)}`,
});

/** `send(i)` for i < count, spread evenly over `spreadMs`; the handles in order. */
async function spread<T>(count: number, spreadMs: number, send: (i: number) => T): Promise<T[]> {
  const out: T[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const at = started + (i * spreadMs) / count;
    const wait = at - performance.now();
    if (wait > 0) await sleep(wait);
    out.push(send(i));
  }
  return out;
}

/** The final answers of `handles`; undefined for one that had none in time. */
function finalAnswers(handles: InteractionHandle[]): Promise<Array<RecordedRestRequest | undefined>> {
  return Promise.all(
    handles.map((h) =>
      h.waitFor(isFinalAnswer, ANSWER_MS).then(
        (r) => r,
        () => undefined,
      ),
    ),
  );
}

/** The accepted edits of a channel message, as recorded. */
function editsOf(discord: DiscordStandIn, channelId: string, messageId: string): RecordedRestRequest[] {
  const path = `/channels/${channelId}/messages/${messageId}`;
  return discord.requests.filter((r) => r.method === 'PATCH' && r.path === path && r.status < 300);
}

/** The requests Discord's global limit does not count: interaction callbacks and webhooks (global-limit.ts). */
const EXEMPT = /^\/(?:interactions\/\d+\/[^/]+\/callback$|webhooks\/\d+\/[^/]+)/;

/** The most counted requests in any 1,000 ms (a sliding window over their arrivals). */
function busiestSecond(requests: readonly RecordedRestRequest[]): number {
  const times = requests
    .filter((r) => !EXEMPT.test(r.path))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  let most = 0;
  let from = 0;
  for (let to = 0; to < times.length; to++) {
    while ((times[to] as number) - (times[from] as number) >= 1_000) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

interface Measured {
  servers: number;
  /** Per server: the second /up's final answer → the reminder's edit, ms (in server order; NaN: none). */
  latencies: number[];
  /** Settings and first /up answered, reminders posted, second /up answered. */
  settingsAnswered: number;
  firstUpsAnswered: number;
  posted: number;
  secondUpsAnswered: number;
  /** Reminders edited exactly once, more than once, never. */
  once: number;
  twice: number;
  never: number;
  /** Edits that named the member who upped. */
  namingTheMember: number;
  tooMany: number;
  /** The 429s' requests: `METHOD /route` and when, ms from the first /settings, and the phases' starts. */
  tooManyRequests: Array<{ request: string; atMs: number }>;
  phasesMs: { firstUps: number; secondUps: number };
  /** The most requests the global limit counts (not the interactions') in any 1,000 ms, as received. */
  busiestSecond: number;
  /** The /up's final answer → the reminder's post, the first round (how late the reminders were), ms. */
  postedAfterUpMs: number[];
  /** The reminder's post → the second /up's dispatch, ms (must stay under the cooldown). */
  upAfterReminderMs: number[];
  wallMs: number;
}

async function measure(count: number): Promise<Measured> {
  const guilds = makeGuilds(count, { channels: ['bumps'] });
  const data = tempDir('bench-followups-');
  let emu: Emulator | undefined;
  let discord: DiscordStandIn | undefined;
  let bot: BotProcess | undefined;
  try {
    emu = await startEmulator({ rateLimits: { global: RAISED, routes: RAISED }, cooldownMs: COOLDOWN_MS });
    discord = await startDiscordStandIn({
      guilds,
      token: discordLikeToken(),
      globalRateLimit: DISCORD_GLOBAL_LIMIT,
    });
    const d = discord;
    bot = new BotProcess(
      'main.js',
      {
        ...botEnv(d, emu),
        DIRECTORY_RATE_LIMIT: `${RAISED.max}/${RAISED.windowMs}`,
        DIRECTORY_ROUTE_RATE_LIMIT: `${RAISED.max}/${RAISED.windowMs}`,
        SHARD_COUNT: '1',
        STATS_INTERVAL: '15m',
        DATA_DIR: data.path,
      },
      'followups',
    );
    await startedReady(bot, START_MS);
    const started = performance.now();

    // Reminders on, each server in its own channel.
    const settings = await finalAnswers(
      await spread(count, SPREAD_MS, (i) => {
        const g = guilds[i] as GuildFixture;
        return d.sendCommand({
          guildId: g.id,
          name: 'settings',
          options: [commandOption.subcommand('reminders', [commandOption.channel('channel', channelOf(g))])],
          permissions: MANAGER,
          user: newUser('manager'),
        });
      }),
    );

    // The first /up: the reminder falls due COOLDOWN_MS later and is posted.
    const firstFrom = performance.now();
    const firstUps = await finalAnswers(
      await spread(count, SPREAD_MS, (i) =>
        d.sendCommand({
          guildId: (guilds[i] as GuildFixture).id,
          name: 'up',
          permissions: MEMBER,
          user: newUser('first'),
        }),
      ),
    );
    const isReminder = (m: PostedMessage) => m.at >= firstFrom && m.text.includes(REMINDER_WORDS);
    const reminders = await Promise.all(
      guilds.map((g) =>
        d.waitForMessage(channelOf(g), isReminder, POSTED_MS).then(
          (m) => m,
          () => undefined,
        ),
      ),
    );
    // The bot records a reminder sent once Discord has answered its post: a moment for the last.
    await sleep(300);

    // The second /up, by other members: each takes its server's reminder, which is edited.
    const users = guilds.map(() => newUser('upper'));
    const secondFrom = performance.now();
    const secondHandles = await spread(count, SPREAD_MS, (i) =>
      d.sendCommand({
        guildId: (guilds[i] as GuildFixture).id,
        name: 'up',
        permissions: MEMBER,
        user: users[i] as { id: string; username: string },
      }),
    );
    const secondUps = await finalAnswers(secondHandles);
    const expected = guilds.filter((_, i) => reminders[i] !== undefined && secondUps[i] !== undefined);
    await eventually(
      () =>
        expected.every((g) => {
          const i = guilds.indexOf(g);
          return editsOf(d, channelOf(g), (reminders[i] as PostedMessage).id).length > 0;
        })
          ? true
          : undefined,
      EDITED_MS,
      'every reminder to be edited',
      50,
    ).catch(() => undefined);
    await sleep(SETTLE_MS);
    const wallMs = performance.now() - started;

    const latencies: number[] = [];
    let once = 0;
    let twice = 0;
    let never = 0;
    let namingTheMember = 0;
    for (const [i, g] of guilds.entries()) {
      const reminder = reminders[i];
      const answer = secondUps[i];
      const edits = reminder ? editsOf(d, channelOf(g), reminder.id) : [];
      if (edits.length === 0) never++;
      else if (edits.length === 1) once++;
      else twice++;
      const [edit] = edits;
      latencies.push(edit && answer ? edit.at - answer.at : Number.NaN);
      if (edit && JSON.stringify(edit.body).includes(`<@${(users[i] as { id: string }).id}>`)) {
        namingTheMember++;
      }
    }
    const upAfterReminderMs = reminders.flatMap((m, i) => {
      const handle = secondHandles[i];
      return m && handle ? [handle.sentAt - m.at] : [];
    });
    const postedAfterUpMs = reminders.flatMap((m, i) => {
      const answer = firstUps[i];
      return m && answer ? [m.at - answer.at] : [];
    });
    return {
      servers: count,
      latencies,
      settingsAnswered: settings.filter(Boolean).length,
      firstUpsAnswered: firstUps.filter(Boolean).length,
      posted: reminders.filter(Boolean).length,
      secondUpsAnswered: secondUps.filter(Boolean).length,
      once,
      twice,
      never,
      namingTheMember,
      tooMany: d.globalRateLimited(),
      tooManyRequests: d.requests
        .filter((r) => r.status === 429)
        .map((r) => ({
          request: `${r.method} ${r.path.replace(/\d{5,}/g, ':id')}`,
          atMs: Math.round(r.at - started),
        })),
      phasesMs: { firstUps: Math.round(firstFrom - started), secondUps: Math.round(secondFrom - started) },
      busiestSecond: busiestSecond(d.requests),
      postedAfterUpMs,
      upAfterReminderMs,
      wallMs,
    };
  } finally {
    await bot?.destroy().catch(() => undefined);
    await discord?.close().catch(() => undefined);
    await emu?.close().catch(() => undefined);
    data.remove();
  }
}

/** The 429 row, naming the requests that got one and in which phase. */
function tooManyRow(m: Measured): Row {
  const base = discordTooManyRow(SCENARIO, m.tooMany);
  const row = {
    ...base,
    note: `${base.note}; the busiest 1,000 ms (sliding, as received): ${m.busiestSecond}`,
  };
  if (m.tooManyRequests.length === 0) return row;
  const phase = (atMs: number): string =>
    atMs >= m.phasesMs.secondUps
      ? 'second /up'
      : atMs >= m.phasesMs.firstUps
        ? 'first /up and posts'
        : 'settings';
  const which = m.tooManyRequests
    .slice(0, 5)
    .map((r) => `${r.request} at ${r.atMs} ms (${phase(r.atMs)})`)
    .join(', ');
  return { ...row, note: `${row.note}; ${which}${m.tooManyRequests.length > 5 ? ', ...' : ''}` };
}

const round = (v: number): number => (Number.isFinite(v) ? Math.round(v) : v);

export async function followupsScenario(): Promise<ScenarioResult> {
  const count = size(100, 20);
  const m = await measure(count);
  const seen = m.latencies.filter(Number.isFinite);
  const latency = summarize(seen);
  const before = seen.filter((v) => v < 0).length;
  const posted = summarize(m.postedAfterUpMs);
  const servers = `${count} servers`;
  const chain =
    `settings answered ${m.settingsAnswered}/${count}, first /up answered ${m.firstUpsAnswered}/${count}, ` +
    `reminders posted ${m.posted}/${count} (p50 ${round(posted.p50)} ms after the first /up's answer, ` +
    `the cooldown ${COOLDOWN_MS} ms), second /up answered ${m.secondUpsAnswered}/${count}, ` +
    `dispatched ${round(Math.min(...m.upAfterReminderMs))} to ${round(Math.max(...m.upAfterReminderMs))} ms ` +
    `after its reminder (an up takes the reminder within the cooldown)`;
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      metric: `follow-through edit, p50 (/up answered → reminder PATCH, ${servers})`,
      unit: 'ms',
      ours: latency.p50,
      verdict: 'info',
      note:
        `${seen.length} of ${count} edits timed; max ${round(latency.max)} ms` +
        (before > 0 ? `; ${before} edit(s) reached Discord before the /up's answer (negative)` : '') +
        `; ${chain}`,
    },
    {
      scenario: SCENARIO,
      metric: `follow-through edit, p99 (${servers})`,
      unit: 'ms',
      ours: latency.p99,
      target: `≤ ${TARGET_MS.toLocaleString('en-US')} ms`,
      verdict: seen.length === count ? atMost(latency.p99, TARGET_MS) : 'FAIL',
      note:
        `both times on the stand-in's clock: the accepted PATCH of @original (or the follow-up message) ` +
        `and the accepted PATCH /channels/{id}/messages/{id} of the posted reminder; ` +
        `second /up spread over ${SPREAD_MS / 1000} s, one member each` +
        (seen.length < count
          ? `; ${count - seen.length} server(s) without a timed edit count as a miss`
          : ''),
    },
    {
      scenario: SCENARIO,
      metric: 'reminders edited exactly once',
      unit: '',
      ours: m.once,
      target: `${count} (all)`,
      verdict: m.once === count ? 'pass' : 'FAIL',
      note:
        `never ${m.never}, more than once ${m.twice}; ${m.namingTheMember} edit(s) named the member who upped; ` +
        `counted ${SETTLE_MS} ms after the last edit`,
    },
    tooManyRow(m),
  ];
  return {
    rows,
    data: {
      servers: count,
      cooldownMs: COOLDOWN_MS,
      spreadMs: SPREAD_MS,
      latencyMs: latency,
      latenciesMs: m.latencies.map(round),
      postedAfterFirstUpMs: posted,
      secondUpAfterReminderMs: summarize(m.upAfterReminderMs),
      settingsAnswered: m.settingsAnswered,
      firstUpsAnswered: m.firstUpsAnswered,
      posted: m.posted,
      secondUpsAnswered: m.secondUpsAnswered,
      editedOnce: m.once,
      editedMoreThanOnce: m.twice,
      neverEdited: m.never,
      editsNamingTheMember: m.namingTheMember,
      discordTooMany: m.tooMany,
      discordTooManyRequests: m.tooManyRequests,
      busiestSecond: m.busiestSecond,
      phasesMs: m.phasesMs,
      wallMs: Math.round(m.wallMs),
    },
  };
}

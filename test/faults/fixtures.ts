/**
 * What the fault families share: the guild the rows run in, a harness or a world (stand-in,
 * emulator, store) of a row's own, and the checks every row makes: no token in a log
 * line, a child's output or a body sent to Discord, nothing that can ping, no unhandled error.
 */
import type { APIEmbed } from 'discord.js';
import { translator } from '../../src/i18n/index.js';
import { type Engine, openStore, type Store } from '../../src/store/index.js';
import {
  type DiscordStandIn,
  discordLikeToken,
  type GuildFixture,
  makeGuild,
  type SendCommandOptions,
  snowflake,
  startDiscordStandIn,
  type ViewedMessage,
} from '../discord/index.js';
import { assertNoViolations } from '../discord/spec/conformance.js';
import {
  type Answer,
  botEnvironment,
  type Harness,
  type HarnessOptions,
  mentionProblems,
  optionString,
  secretLeaks,
  sentMessages,
  startHarness,
} from '../e2e/harness.js';
import { type Emulator, IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { freshPlace, type Place } from '../store/places.js';
import type { BotProcess } from '../support/bot-process.js';
import { asEmbed, isLayoutMessage } from '../support/layout-view.js';
import { assertLocal } from '../support/local.js';
import { discordRequestTexts, leaksIn } from '../support/secrets.js';
import { tempDir } from '../support/temp.js';
import { Checks, message, track } from './helpers.js';
import type { Outcome } from './runner.js';

export const freshGuild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
export const EN = translator('en-US');
export const RU = translator('ru');

export function bumpsOf(emu: Emulator, serverId: string): number {
  return emu.state.servers.get(serverId)?.information.bumps ?? 0;
}

/** The message's first embed; a Components V2 message read as one (support/layout-view.ts). */
export function firstEmbed(m: ViewedMessage | undefined): APIEmbed | undefined {
  if (m && isLayoutMessage(m)) return asEmbed(m) as APIEmbed;
  return m?.embeds?.[0] as APIEmbed | undefined;
}

export function newUserRef(prefix: string): NonNullable<SendCommandOptions['user']> {
  return { id: snowflake(), username: `${prefix}_${snowflake().slice(-6)}` };
}

/** `/bot kerdoku` in the fresh guild: the ordinary look-up a row makes after its fault. */
export function lookUpKerdoku(h: Harness, timeoutMs: number): Promise<Answer> {
  return h.run({ guildId: freshGuild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] }, timeoutMs);
}

// ---- the token scan -----------------------------------------------------------------------------

/** What the token scan looked at, over every row (the last row reports it). */
export const tokenScan = { logLines: 0, childLines: 0, discordBodies: 0, leaks: [] as string[] };

/**
 * Checks every in-process row makes: tokens, pings, unhandled rejections, and channel posts unless
 * the row's bot is meant to post (the webhook receiver announcing events).
 */
function harnessHygiene(h: Harness, c: Checks, channelPosts: boolean): void {
  const leaks = secretLeaks(h);
  tokenScan.logLines += h.lines.length;
  tokenScan.discordBodies += h.discord.requests.length;
  tokenScan.leaks.push(...leaks);
  c.none(leaks, 'a token leaked');
  c.none(h.unhandled.map(message), 'unhandled rejection');
  c.none(
    h.lines.filter((l) => /unhandled|uncaught/i.test(l)).map((l) => l.slice(0, 160)),
    'an unhandled error was logged',
  );
  const pings = sentMessages(h.discord.requests).flatMap((m) => mentionProblems(m));
  c.none(pings, 'a message could ping');
  if (channelPosts) return;
  const posts = h.discord.requests.filter((r) => r.method !== 'GET' && /^\/channels\//.test(r.path));
  c.none(
    posts.map((r) => `${r.method} ${r.path}`),
    'the bot posted into a channel',
  );
}

/** Token scan over children's output and everything sent to the stand-in. */
export function processHygiene(world: World, procs: readonly BotProcess[], c: Checks): void {
  const secrets = [world.discord.token, TOKENS.serviceBot];
  const childTexts = procs.flatMap((p) =>
    p.lines.map((l, i) => ({ where: `${p.name} ${l.stream} ${i}`, text: l.raw })),
  );
  const bodies = discordRequestTexts(world.discord.requests);
  const leaks = leaksIn([...childTexts, ...bodies], secrets);
  tokenScan.childLines += childTexts.length;
  tokenScan.discordBodies += bodies.length;
  tokenScan.leaks.push(...leaks);
  c.none(leaks, 'a token leaked');
  const pings = sentMessages(world.discord.requests).flatMap((m) => mentionProblems(m));
  c.none(pings, 'a message could ping');
  const unhandled = procs.flatMap((p) => p.lines.filter((l) => /unhandled|uncaught/i.test(l.raw)));
  c.none(
    unhandled.map((l) => l.raw.slice(0, 160)),
    'an unhandled error was logged',
  );
}

// ---- in process ---------------------------------------------------------------------------------

/**
 * Runs `body` on a harness of its own (own emulator, stand-in, bot and data directory).
 * `channelPosts`: the row expects the bot to post into channels (otherwise a post is a problem).
 */
export async function inHarness(
  options: HarnessOptions,
  body: (h: Harness, c: Checks) => Promise<string>,
  { channelPosts = false }: { channelPosts?: boolean } = {},
): Promise<Outcome> {
  const c = new Checks();
  const data = tempDir('faults-data-');
  const h = await startHarness({
    guilds: [freshGuild],
    // Tokens must not reach a log line at all, before the logger's scrubbing.
    scrubSecrets: false,
    ...options,
    env: { DATA_DIR: data.path, ...options.env },
  }).catch((err: unknown) => {
    data.remove();
    throw err;
  });
  const close = track(async () => {
    await h.close();
    data.remove();
  });
  let observed: string;
  try {
    observed = await body(h, c);
  } catch (err) {
    observed = `threw: ${message(err)}`;
    c.that(false, observed);
  }
  harnessHygiene(h, c, channelPosts);
  await close();
  c.none(h.stuckStops, 'the bot did not stop');
  return { observed: [observed, ...c.notes].join('; '), problems: c.problems };
}

// ---- the real process ---------------------------------------------------------------------------

/** What the built bot runs against: a stand-in, an emulator and a store of the row's own. */
export interface World {
  emu: Emulator;
  discord: DiscordStandIn;
  /** Where the bot keeps its store: a SQLite file in a data directory, or a PostgreSQL schema. */
  store: Place;
  /** The interactions in the bot's journal of ups in flight, as the store holds them now. */
  journaled(): Promise<string[]>;
  /** The shards whose gateway session the bot has saved in its store (gateway-sessions.ts). */
  savedSessions(): Promise<number[]>;
  close: () => Promise<void>;
}

export interface WorldOptions {
  /** Guilds besides freshGuild. */
  guilds?: GuildFixture[];
  /** HELLO's heartbeat interval (the stand-in's default is Discord's, 41.25 s). */
  heartbeatIntervalMs?: number;
}

export async function startWorld(engine: Engine = 'sqlite', options: WorldOptions = {}): Promise<World> {
  const emu = await startEmulator({ rateLimits: false });
  const discord = await startDiscordStandIn({
    token: discordLikeToken(),
    guilds: [freshGuild, ...(options.guilds ?? [])],
    ...(options.heartbeatIntervalMs === undefined
      ? {}
      : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
  });
  const place = await freshPlace(engine);
  /** The test's own connection to the bot's store, opened when first needed. */
  let reader: Promise<Store> | undefined;
  const close = track(async () => {
    await discord.close();
    await emu.close();
    await reader?.then((store) => store.close()).catch(() => undefined);
    await place.remove();
    assertNoViolations(discord.specViolations());
  });
  return {
    emu,
    discord,
    store: place,
    async journaled() {
      reader ??= openStore(place.options);
      const rows = await (await reader).run((db) =>
        db.selectFrom('pending_ups').select('interaction_id').execute(),
      );
      return rows.map((row) => row.interaction_id);
    },
    async savedSessions() {
      reader ??= openStore(place.options);
      const rows = await (await reader).run((db) =>
        db.selectFrom('gateway_sessions').select('shard_id').execute(),
      );
      return rows.map((row) => row.shard_id);
    },
    close,
  };
}

/** The child's environment: the world's addresses, or a proxy in front of either. */
export function childEnv(
  world: World,
  overrides: { discordApi?: string; directoryApi?: string } = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  const settings = botEnvironment(world.emu, world.discord, {
    ...world.store.env,
    SHUTDOWN_TIMEOUT_MS: '1000',
    ...(overrides.discordApi ? { DISCORD_API_URL: overrides.discordApi } : {}),
    ...(overrides.directoryApi ? { DIRECTORY_API_URL: overrides.directoryApi } : {}),
  });
  for (const [name, value] of Object.entries(settings)) if (value !== undefined) env[name] = value;
  assertLocal(env.DISCORD_API_URL, 'DISCORD_API_URL');
  assertLocal(env.DIRECTORY_API_URL, 'DIRECTORY_API_URL');
  return env;
}

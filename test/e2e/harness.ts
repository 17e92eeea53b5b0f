/**
 * End-to-end harness: the directory emulator, the Discord stand-in and the real bot (createBot, the
 * real discord.js client, the real directory client), all on 127.0.0.1, with the bot's log lines
 * captured. Helpers send a command or a button click and wait for the router's one
 * "interaction handled" line for it, so a test sees the final answer and its outcome.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type APIEmbed, PermissionFlagsBits } from 'discord.js';
import type { BotApp } from '../../src/app/bot.js';
import type { Environment } from '../../src/config/env.js';
import {
  commandOption,
  type DiscordStandIn,
  discordLikeToken,
  type GuildFixture,
  type InteractionHandle,
  type InteractionView,
  makeUser,
  type RecordedRestRequest,
  randomToken,
  type SendButtonOptions,
  type SendCommandOptions,
  type SendModalOptions,
  snowflake,
  type UserFixture,
  type ViewedMessage,
} from '../discord/index.js';
import { assertNoViolations } from '../discord/spec/conformance.js';
import { type Emulator, type EmulatorOptions, TOKENS } from '../emulator/index.js';
import { asEmbed, isLayoutMessage, viewOf } from '../support/layout-view.js';
import { LEVEL, type LogEntry, LogSink } from '../support/logs.js';
import {
  createRigBot,
  HandledLines,
  type RigBot,
  type RigBotOptions,
  rigEnvironment,
  startStandIns,
} from '../support/rig.js';
import { discordRequestTexts, leaksIn, linesOf } from '../support/secrets.js';
import { withTimeout } from '../support/wait.js';

export { closedPortUrl } from '../support/local.js';
export { percentile } from '../support/stats.js';
export { LEVEL, type LogEntry };
/** One data directory per test file: its bots' journals never meet another file's. */
export const DATA_DIR = mkdtempSync(join(tmpdir(), 'directory-bot-e2e-'));
process.once('exit', () => rmSync(DATA_DIR, { recursive: true, force: true }));
export const EPHEMERAL = 64;
const DEFAULT_WAIT_MS = 10_000;
/** How long teardown waits for a bot's stop() before going on without it. */
export const STOP_BOUND_MS = 5_000;

export interface HarnessOptions {
  guilds?: GuildFixture[];
  users?: UserFixture[];
  /** Overrides of the bot's environment (see botEnvironment). */
  env?: Environment;
  /** Default: no rate limits in the emulator. */
  emulator?: EmulatorOptions;
  /** createBot's gatherTimeoutMs (default 1000 here). */
  gatherTimeoutMs?: number;
  /** Run the stats poster (default false: its POST /stats would only add noise to these tests). */
  postStats?: boolean;
  /**
   * Give the logger the secrets to scrub, as main.ts does (default true). false shows whether a
   * token reaches a log line at all, before the last line of defence.
   */
  scrubSecrets?: boolean;
  /** The bot's metrics, as main.ts makes them (default none); the running bot's are `metrics`. */
  metrics?: RigBotOptions['metrics'];
  /** The gateway's heartbeat interval (default Discord's 41,250 ms). */
  heartbeatIntervalMs?: number;
  /** The day's identify budget the stand-in tells (default 1,000). */
  sessionStartLimit?: number;
}

export interface Answer {
  handle: InteractionHandle;
  /** The router's "interaction handled" line for this interaction. */
  line: LogEntry;
  outcome: string;
  view: InteractionView;
  /** REST requests of this interaction (callback, webhook edits, follow-ups), in order. */
  requests: RecordedRestRequest[];
}

export interface Harness {
  emu: Emulator;
  discord: DiscordStandIn;
  readonly bot: BotApp;
  /** The running bot's metrics (HarnessOptions.metrics), else undefined. */
  readonly metrics: RigBot['metrics'];
  /** Every raw log line of every bot instance started by this harness. */
  lines: string[];
  entries(): LogEntry[];
  /** The first log line (already written or still to come) matching `pred`. */
  waitForLog(pred: (entry: LogEntry) => boolean, timeoutMs?: number): Promise<LogEntry>;
  /** Unhandled rejections seen while the harness was open. */
  unhandled: unknown[];
  /** Bot stops that failed or did not finish within STOP_BOUND_MS (teardown went on without them). */
  stuckStops: string[];
  /** Every token this harness handed out (directory tokens and the Discord token). */
  secrets: Set<string>;
  /**
   * Sends a command as a user of its own (unless one is given) without waiting. `done` may be
   * left unawaited: its rejection (no answer in time) is never reported as unhandled.
   */
  send(options: SendCommandOptions, timeoutMs?: number): Pending;
  /** Sends a command and waits for its final answer. */
  run(options: SendCommandOptions, timeoutMs?: number): Promise<Answer>;
  /** Clicks a button and waits for the answer. */
  click(options: SendButtonOptions, timeoutMs?: number): Promise<Answer>;
  /** Submits a modal the bot showed, filled in, and waits for the answer. */
  submit(options: SendModalOptions, timeoutMs?: number): Promise<Answer>;
  /** Stops the running bot and starts a new one (a new discord.js client) with these env overrides. */
  restartBot(env?: Environment): Promise<BotApp>;
  /** Emulator back to its seed, faults of both sides cleared. */
  reset(): void;
  close(): Promise<void>;
}

export interface Pending {
  handle: InteractionHandle;
  done: Promise<Answer>;
}

/** The bot's environment: everything on 127.0.0.1, the client's own limits out of the way. */
export function botEnvironment(
  emu: Emulator,
  discord: DiscordStandIn,
  overrides: Environment = {},
): Environment {
  const places = { directoryUrl: emu.url, discordRestUrl: discord.restUrl, discordToken: discord.token };
  return rigEnvironment(
    { ...places, dataDir: DATA_DIR },
    {
      DIRECTORY_API_VERSION: 'v2',
      DIRECTORY_TOKEN_KIND: 'Bot',
      // Every look-up asks the emulator, so that a test sees each request it makes (the cache has
      // tests of its own: test/contract/v3.test.ts, test/e2e/v3.test.ts).
      DIRECTORY_CACHE_SIZE: '0',
      DIRECTORY_RATE_LIMIT: '10000/1000',
      DIRECTORY_ROUTE_RATE_LIMIT: '10000/1000',
      DIRECTORY_RATE_LIMIT_MARGIN_MS: '0',
      LOG_LEVEL: 'debug',
      ...overrides,
    },
  );
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  process.on('unhandledRejection', onUnhandled);

  const { emu, discord } = await startStandIns({
    emulator: { rateLimits: false, ...options.emulator },
    discord: {
      token: discordLikeToken(),
      guilds: options.guilds ?? [],
      users: options.users ?? [],
      ...(options.heartbeatIntervalMs ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
      ...(options.sessionStartLimit ? { sessionStartLimit: options.sessionStartLimit } : {}),
    },
  });
  const secrets = new Set<string>([discord.token, ...Object.values(TOKENS)]);
  const sink = new LogSink();
  /** Every bot of this harness logs here: a wait outlives a restart. */
  const log = new HandledLines(sink);

  let bot: BotApp | undefined;
  let metrics: RigBot['metrics'];

  async function startBot(overrides: Environment): Promise<BotApp> {
    const rig = await createRigBot({
      env: botEnvironment(emu, discord, overrides),
      log,
      scrubSecrets: options.scrubSecrets !== false,
      gatherTimeoutMs: options.gatherTimeoutMs ?? 1_000,
      postStats: options.postStats ?? false,
      onFatal: (reason) => rig.logger.error({ reason }, 'fatal reported to the harness'),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    metrics = rig.metrics;
    for (const secret of rig.secrets) secrets.add(secret);
    await rig.start();
    return rig.app;
  }

  bot = await startBot(options.env ?? {});
  const stuckStops: string[] = [];

  /** Stops a bot, but never hangs the teardown: a stop() past the bound is recorded and left behind. */
  const stopBounded = async (app: BotApp): Promise<void> => {
    const stopped = app.stop().then(
      () => 'stopped',
      (err: unknown) => `bot.stop() failed: ${err instanceof Error ? err.message : String(err)}`,
    );
    const outcome = await withTimeout(stopped, STOP_BOUND_MS, 'the bot to stop').catch(
      () => `bot.stop() did not finish within ${STOP_BOUND_MS} ms`,
    );
    if (outcome !== 'stopped') stuckStops.push(outcome);
  };

  /** The answer, once the bot has logged the interaction as handled (wait registered before sending). */
  const answerOf = async (handle: InteractionHandle, handled: Promise<LogEntry>): Promise<Answer> => {
    const line = await handled;
    return {
      handle,
      line,
      outcome: String(line.outcome),
      view: handle.view(),
      requests: handle.requests(),
    };
  };

  const userFor = (given: SendCommandOptions['user']): NonNullable<SendCommandOptions['user']> =>
    given ?? { id: snowflake(), username: `e2e_${randomToken(6).toLowerCase()}` };

  const send = (opts: SendCommandOptions, timeoutMs = DEFAULT_WAIT_MS): Pending => {
    const user = userFor(opts.user);
    const handled = log.waitFor(user.id, timeoutMs);
    const handle = discord.sendCommand({ ...opts, user });
    const done = answerOf(handle, handled);
    done.catch(() => undefined);
    return { handle, done };
  };

  const harness: Harness = {
    emu,
    discord,
    get bot(): BotApp {
      if (!bot) throw new Error('no bot is running');
      return bot;
    },
    get metrics() {
      return metrics;
    },
    lines: sink.lines,
    entries: () => [...sink.entries],
    waitForLog: (pred, timeoutMs = DEFAULT_WAIT_MS) => sink.waitFor(pred, timeoutMs, 'a matching log line'),
    unhandled,
    stuckStops,
    secrets,
    send,
    run: (opts, timeoutMs) => send(opts, timeoutMs).done,
    click: (opts, timeoutMs = DEFAULT_WAIT_MS) => {
      const user = userFor(opts.user);
      const handled = log.waitFor(user.id, timeoutMs);
      const handle = discord.sendButton({ ...opts, user });
      return answerOf(handle, handled);
    },
    submit: (opts, timeoutMs = DEFAULT_WAIT_MS) => {
      const user = userFor(opts.user);
      const handled = log.waitFor(user.id, timeoutMs);
      const handle = discord.sendModal({ ...opts, user });
      return answerOf(handle, handled);
    },
    async restartBot(overrides = {}) {
      const old = bot;
      bot = undefined;
      if (old) await stopBounded(old);
      bot = await startBot(overrides);
      return bot;
    },
    reset() {
      emu.reset();
      discord.clearRestFaults();
    },
    async close() {
      try {
        if (bot) await stopBounded(bot);
      } finally {
        bot = undefined;
        log.close();
        await discord.close();
        await emu.close();
        // Late rejections of the closing clients would show up here first.
        await new Promise((resolve) => setTimeout(resolve, 20));
        process.off('unhandledRejection', onUnhandled);
      }
      // Every request the bot sent is one Discord's API description allows (test/discord/spec).
      assertNoViolations(discord.specViolations());
    },
  };
  return harness;
}

// ---- reading answers ---------------------------------------------------------------------------

/** Messages of an interaction that are still there (not deleted). */
export function liveMessages(view: InteractionView): ViewedMessage[] {
  return [...(view.original ? [view.original] : []), ...view.followUps].filter((m) => !m.deleted);
}

export function isEphemeral(message: ViewedMessage): boolean {
  return ((message.flags ?? 0) & EPHEMERAL) !== 0;
}

/** The one public message the interaction left, or throws. */
export function publicMessage(answer: Answer): ViewedMessage {
  const live = liveMessages(answer.view);
  const shown = live.filter((m) => !isEphemeral(m));
  if (shown.length !== 1 || live.length !== 1) {
    throw new Error(`expected exactly one public message, got ${JSON.stringify(answer.view)}`);
  }
  return shown[0] as ViewedMessage;
}

/** The one private message the interaction left (nothing public remains), or throws. */
export function privateMessage(answer: Answer): ViewedMessage {
  const live = liveMessages(answer.view);
  if (live.length !== 1 || !live.every(isEphemeral)) {
    throw new Error(`expected exactly one private message, got ${JSON.stringify(answer.view)}`);
  }
  return live[0] as ViewedMessage;
}

/**
 * The message's embed at `index`; for a Components V2 message (index 0), its layout read as one
 * (support/layout-view.ts): title, description, facts as fields, footer, thumbnail, image.
 */
export function embedOf(message: ViewedMessage, index = 0): APIEmbed {
  if (index === 0 && isLayoutMessage(message)) return asEmbed(message) as APIEmbed;
  const embed = message.embeds?.[index];
  if (embed === undefined) throw new Error(`message ${message.id} has no embed ${index}`);
  return embed as APIEmbed;
}

export interface Button {
  label?: string;
  custom_id?: string;
  url?: string;
  disabled?: boolean;
  style?: number;
}

/** Buttons of a message, row by row flattened (inside a V2 container too). */
export function buttonsOf(message: ViewedMessage): Button[] {
  return viewOf(message).rows.flat() as Button[];
}

export function fieldValue(embed: APIEmbed, name: string): string | undefined {
  return embed.fields?.find((f) => f.name === name)?.value;
}

/** Every text of an embed (title, description, fields, footer, author), for searching. */
export function embedText(embed: APIEmbed): string {
  return [
    embed.title,
    embed.description,
    embed.footer?.text,
    embed.author?.name,
    ...(embed.fields ?? []).flatMap((f) => [f.name, f.value]),
  ]
    .filter((s): s is string => typeof s === 'string')
    .join('\n');
}

export function optionString(name: string, value: string): { type: 3; name: string; value: string } {
  return { type: 3, name, value };
}

/** A user option with its resolved user, as Discord sends it. */
export function userOption(user: UserFixture): Pick<SendCommandOptions, 'options' | 'resolved'> {
  return {
    options: [{ type: 6, name: 'user', value: user.id }],
    resolved: { users: { [user.id]: user } },
  };
}

export function newUser(username: string, globalName: string | null = null): UserFixture {
  return makeUser({ id: snowflake(), username, global_name: globalName });
}

// ---- what the bot sent Discord -------------------------------------------------------------------

/** The message payload a request carries: a callback's data (types 4 and 7) or a webhook message body. */
export function sentMessage(request: RecordedRestRequest): Record<string, unknown> | undefined {
  const body = request.body;
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  if (/^\/interactions\/\d+\/[^/]+\/callback$/.test(request.path)) {
    const data = record.data;
    const carries = record.type === 4 || record.type === 7;
    return carries && typeof data === 'object' && data !== null
      ? (data as Record<string, unknown>)
      : undefined;
  }
  if (/^\/webhooks\//.test(request.path) && (request.method === 'POST' || request.method === 'PATCH')) {
    return record;
  }
  if (/^\/channels\/\d+\/messages/.test(request.path) && request.method !== 'GET') return record;
  return undefined;
}

/** Messages with something to show (content, embeds or components). */
export function sentMessages(requests: readonly RecordedRestRequest[]): Record<string, unknown>[] {
  return requests
    .map(sentMessage)
    .filter(
      (m): m is Record<string, unknown> =>
        m !== undefined && ('content' in m || 'embeds' in m || 'components' in m),
    );
}

/** Every string under a value, recursively. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

/** The visible text of a sent message: content and embeds, or a layout's texts (not button labels or URLs). */
export function visibleText(message: Record<string, unknown>): string {
  if (isLayoutMessage(message)) return viewOf(message).prose.join('\n');
  return [...stringsIn(message.content), ...stringsIn(message.embeds)].join('\n');
}

export const RAW_MENTION = /@everyone|@here|<@&/i;

/** Problems with allowed_mentions of one sent message ([] when it can ping nobody). */
export function mentionProblems(message: Record<string, unknown>): string[] {
  const allowed = message.allowed_mentions;
  if (typeof allowed !== 'object' || allowed === null) return ['no allowed_mentions'];
  const problems: string[] = [];
  const a = allowed as Record<string, unknown>;
  for (const key of ['parse', 'users', 'roles'] as const) {
    const list = a[key];
    if (list !== undefined && (!Array.isArray(list) || list.length > 0)) {
      problems.push(`allowed_mentions.${key} = ${JSON.stringify(list)}`);
    }
  }
  if (a.replied_user === true) problems.push('allowed_mentions.replied_user = true');
  const text = visibleText(message);
  const raw = RAW_MENTION.exec(text);
  if (raw) problems.push(`raw ${raw[0]} in ${JSON.stringify(text.slice(0, 200))}`);
  return problems;
}

/** Where any of the secrets occurs in the log lines and in the requests sent to Discord. */
export function secretLeaks(h: Harness): string[] {
  return leaksIn([...linesOf('log line', h.lines), ...discordRequestTexts(h.discord.requests)], h.secrets);
}

/**
 * What an admin does to receive the directory's webhook: /settings webhook (as a member with Manage
 * Server) with the key and channel, then the URL and key pasted on the server's page (the
 * emulator's delivery target; the bot's own receiver unless `url` says otherwise).
 */
export async function setUpWebhook(
  h: Harness,
  setup: { guildId: string; key: string; channelId: string; url?: string },
): Promise<Answer> {
  h.secrets.add(setup.key);
  const answer = await h.run({
    guildId: setup.guildId,
    name: 'settings',
    options: [
      commandOption.subcommand('webhook', [
        commandOption.string('key', setup.key),
        commandOption.channel('channel', setup.channelId),
      ]),
    ],
    permissions: PermissionFlagsBits.ManageGuild,
  });
  if (answer.outcome !== 'webhook-on') throw new Error(`/settings webhook answered ${answer.outcome}`);
  h.emu.webhooks.set(setup.guildId, {
    url: setup.url ?? `http://127.0.0.1:${h.bot.webhookPort()}/hooks/directory/${setup.guildId}`,
    key: setup.key,
  });
  return answer;
}

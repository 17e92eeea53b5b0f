/**
 * The sandbox session: the real bot (createBot with the real command registry) against the
 * directory emulator and the local Discord stand-in, both on 127.0.0.1 with sample data, playing
 * a short scripted session and writing what a user would see, on the rig the end-to-end tests
 * use (test/support/rig.ts). No tokens, no network beyond loopback. `npm run sandbox` runs it through main.ts; the sandbox test runs it in-process.
 */
import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import { ApplicationCommandOptionType } from 'discord.js';
import type { BotApp } from '../../src/app/bot.js';
import { WebhookRepository } from '../../src/store/index.js';
import {
  type DiscordStandIn,
  type InteractionHandle,
  MessageFlag,
  makeGuild,
  makeUser,
  snowflake,
  type ViewedMessage,
} from '../discord/index.js';
import { type Emulator, IDS, V3_KEYS } from '../emulator/index.js';
import {
  createRigBot,
  HandledLines,
  rigEnvironment,
  START_BOUND_MS,
  type StandIns,
  startStandIns,
} from '../support/rig.js';
import { buttonsOf, createStyle, renderMessage, type Style, wantsColor } from './render.js';

export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

export interface RunSandboxOptions {
  /** Where the transcript goes. */
  out: Writable;
  /** ANSI colours; default: when `out` is a TTY and NO_COLOR is unset or empty. */
  color?: boolean;
  /** The bot's log file; null drops the logs. Default: a new file in the OS temp directory. */
  logFile?: string | null;
  /**
   * The bound of each step and each part of the shutdown. Default 10 s. The start-up (the log
   * file, the stand-ins, the bot's login) is bounded by START_BOUND_MS (60 s) whatever this is:
   * a busy machine starts slowly, and that is not the failure a short bound here is meant to show.
   */
  timeoutMs?: number;
  /** Aborting ends the session early (Ctrl-C); the shutdown still runs. */
  signal?: AbortSignal;
  /** For tests: called once both stand-ins run, before the bot starts (to inject faults, say). */
  setUp?: (stage: { emulator: Emulator; standIn: DiscordStandIn }) => void;
}

/** A failed or timed-out step, a start-up or shutdown that did not finish: the message says which. */
export class SandboxError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SandboxError';
  }
}

// -------------------------------------------------------------------------------------------------
// The script

type Visibility = 'public' | 'private';

interface Expectation {
  /** The router's outcome for the interaction ('success', 'cooldown', 'shown', 'page:1' ...). */
  outcome: string;
  visibility: Visibility;
}

interface CommandStep {
  kind: 'command';
  name: string;
  /** String options, in the order they are typed. */
  options?: ReadonlyArray<{ name: string; value: string }>;
  note: string;
  expect: Expectation;
}

interface ButtonStep {
  kind: 'button';
  label: string;
  /** Index of the earlier step whose answer carries the button. */
  on: number;
  /** What that message is, for the transcript ("the bot card"). */
  where: string;
  note: string;
  expect: Expectation;
}

export type Step = CommandStep | ButtonStep;

/** The session user: the sample profile of the emulator (cipherka), also the guild's owner. */
const USER = { id: IDS.profileUser, username: 'cipherka', global_name: 'Cipherka' } as const;
const GUILD_NAME = 'BotiCord Community';
const GUILD_ICON = '060188f770836697846710b109272e4c';
const CHANNEL = 'general';
const BOT_NAME = 'Directory Bot';
/** Discord users the cards name: the session user and the bots shown (their names and avatars). */
const KNOWN_USERS = [
  makeUser(USER),
  makeUser({ id: IDS.plainBot, username: 'Kerdoku', global_name: null, bot: true }),
  makeUser({ id: IDS.botManyComments, username: 'Sonata', global_name: null, bot: true }),
];

/**
 * On API v3, the directory's current interface (the bot's default): a bot may not raise a
 * server there, so /up says where to; look-ups go by ID, a short code through the search.
 */
export const SCRIPT: readonly Step[] = [
  {
    kind: 'command',
    name: 'up',
    note: 'raise this server: on v3 the directory lets no other bot do it, so the bot says where',
    expect: { outcome: 'onSite', visibility: 'private' },
  },
  {
    kind: 'command',
    name: 'bot',
    options: [{ name: 'ref', value: 'kerdoku' }],
    note: "a bot card, by short code (found through the directory's search)",
    expect: { outcome: 'shown', visibility: 'public' },
  },
  {
    kind: 'command',
    name: 'server',
    note: 'the card of this server',
    expect: { outcome: 'shown', visibility: 'public' },
  },
  {
    kind: 'command',
    name: 'profile',
    note: 'your own directory profile, your bots and servers',
    expect: { outcome: 'shown', visibility: 'public' },
  },
  {
    kind: 'command',
    name: 'bot',
    options: [{ name: 'ref', value: IDS.botManyComments }],
    note: 'a bot with many comments, by ID',
    expect: { outcome: 'shown', visibility: 'public' },
  },
  {
    kind: 'button',
    label: 'Comments',
    on: 4,
    where: 'the bot card',
    note: 'opens the first page of comments, for you only',
    expect: { outcome: 'page:0', visibility: 'private' },
  },
  {
    kind: 'button',
    label: 'Next',
    on: 5,
    where: 'the comments',
    note: 'turns the page: the same message is edited',
    expect: { outcome: 'page:1', visibility: 'private' },
  },
];

function typedCommand(step: CommandStep): string {
  const options = (step.options ?? []).map((o) => ` ${o.name}:${o.value}`).join('');
  return `/${step.name}${options}`;
}

export function describeStep(step: Step): string {
  return step.kind === 'command' ? typedCommand(step) : `[${step.label}] on ${step.where}`;
}

// -------------------------------------------------------------------------------------------------
// Waiting, bounded

function reasonOf(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new SandboxError(typeof reason === 'string' ? reason : 'interrupted');
}

/** `work`, or a SandboxError after `ms`, or the abort reason: whichever comes first. */
function bounded<T>(work: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      finish();
      reject(signal ? reasonOf(signal) : new SandboxError('interrupted'));
    };
    const finish = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    timer = setTimeout(() => {
      finish();
      reject(new SandboxError(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        finish();
        resolve(value);
      },
      (err: unknown) => {
        finish();
        reject(err);
      },
    );
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// -------------------------------------------------------------------------------------------------
// One step

interface StepResult {
  message: ViewedMessage;
  visibility: Visibility;
}

interface Session {
  standIn: DiscordStandIn;
  /** The bot's log: each step waits there for its "interaction handled" line. */
  handled: HandledLines;
  guildId: string;
  timeoutMs: number;
  signal: AbortSignal;
  write(line?: string): void;
  style: Style;
  names: ReadonlyMap<string, string>;
}

function hasContent(m: ViewedMessage): boolean {
  return (m.content ?? '') !== '' || (m.embeds?.length ?? 0) > 0 || (m.components?.length ?? 0) > 0;
}

function send(
  session: Session,
  step: Step,
  results: readonly StepResult[],
): { handle: InteractionHandle; clicked?: string } {
  const base = { guildId: session.guildId, user: USER, locale: 'en-US' };
  if (step.kind === 'command') {
    const options = (step.options ?? []).map((o) => ({
      type: ApplicationCommandOptionType.String as const,
      name: o.name,
      value: o.value,
    }));
    return { handle: session.standIn.sendCommand({ ...base, name: step.name, options }) };
  }
  const source = results[step.on];
  if (!source) throw new SandboxError(`step ${step.on + 1} left no message to click on`);
  const button = buttonsOf(source.message).find((b) => b.label === step.label);
  if (!button?.customId) {
    const labels = buttonsOf(source.message).map((b) => b.label);
    throw new SandboxError(
      `no [${step.label}] button on ${step.where} (buttons: ${labels.join(', ') || 'none'})`,
    );
  }
  if (button.disabled) throw new SandboxError(`the [${step.label}] button on ${step.where} is disabled`);
  const handle = session.standIn.sendButton({
    ...base,
    customId: button.customId,
    messageId: source.message.id,
  });
  return { handle, clicked: source.message.id };
}

async function runStep(
  session: Session,
  step: Step,
  index: number,
  results: readonly StepResult[],
): Promise<StepResult> {
  const { style: s, write } = session;
  const counter = `${index + 1}/${SCRIPT.length}`;
  const action =
    step.kind === 'command'
      ? `${USER.username} types ${s.bold(typedCommand(step))} in #${CHANNEL}`
      : `${USER.username} clicks ${s.bold(`[${step.label}]`)} on ${step.where}`;
  write();
  write(`${s.cyan(`━━ ${counter}`)} ${action}`);
  write(s.dim(`   ${step.note}`));

  const started = performance.now();
  const answered = session.handled.waitFor(USER.id, session.timeoutMs, {
    what: "the bot's answer",
    signal: session.signal,
  });
  const { handle, clicked } = send(session, step, results);
  if (handle.delivery !== 'sent') {
    throw new SandboxError(`the Discord stand-in could not deliver the interaction (${handle.delivery})`);
  }
  const handled = { outcome: String((await answered).outcome) };
  const elapsed = Math.round(performance.now() - started);

  const view = handle.view();
  const shown = [view.original, ...view.followUps].filter(
    (m): m is ViewedMessage => m !== undefined && !m.deleted && hasContent(m),
  );
  const message = shown.at(-1);
  if (!message) throw new SandboxError(`the bot handled it (${handled.outcome}) but nothing is shown`);
  const visibility: Visibility = ((message.flags ?? 0) & MessageFlag.Ephemeral) !== 0 ? 'private' : 'public';

  const where =
    visibility === 'private'
      ? s.yellow('only you can see this')
      : `public: everyone in #${CHANNEL} can see this`;
  const how = message.id === clicked ? 'the bot edits that message' : 'the bot answers';
  write(`   ${how} · ${where}`);
  if (view.original?.deleted === true && step.kind === 'command') {
    write(s.dim(`   (the public "${BOT_NAME} is thinking…" message was deleted first)`));
  }
  const context = { nowMs: Date.now(), style: s, names: session.names, indent: '   ' };
  for (const line of renderMessage(message, context)) write(line);

  const problems: string[] = [];
  if (handled.outcome !== step.expect.outcome) {
    problems.push(`expected the outcome ${step.expect.outcome}, got ${handled.outcome}`);
  }
  if (visibility !== step.expect.visibility) {
    problems.push(`expected a ${step.expect.visibility} answer, got a ${visibility} one`);
  }
  if (problems.length > 0) throw new SandboxError(problems.join('; '));
  write(s.green(`   ✓ ${handled.outcome}`) + s.dim(` · ${elapsed} ms`));
  return { message, visibility };
}

// -------------------------------------------------------------------------------------------------
// The directory's webhook

/** What the directory delivers once a server's page has the bot's webhook URL and key. */
const WEBHOOK_DELIVERIES: ReadonlyArray<{
  what: string;
  send: (emu: Emulator, guildId: string) => Promise<number>;
}> = [
  { what: 'the test button', send: (emu, guildId) => emu.webhooks.test(guildId) },
  {
    what: 'a new comment on the server',
    send: (emu, guildId) =>
      emu.webhooks.comment(guildId, 'new', {
        user: USER.id,
        new: 'Great community, **friendly** mods. @everyone come!',
        vote: { old: null, new: 1 },
      }),
  },
];

async function webhookPart(
  session: Session,
  world: { bot: BotApp; emulator: Emulator; guildId: string; channelId: string },
): Promise<void> {
  const { style: s, write } = session;
  const { bot, emulator, guildId, channelId } = world;
  const port = bot.webhookPort();
  if (port === undefined) throw new SandboxError('the webhook receiver did not start');
  const key = 'sandbox-webhook-key';
  // What /settings webhook key:… channel:#general stores, and what the admin pastes on the directory.
  await new WebhookRepository(bot.store).configure(guildId, key, channelId, Date.now());
  const url = `http://127.0.0.1:${port}/hooks/directory/${guildId}`;
  emulator.webhooks.set(guildId, { url, key });
  write();
  write(`${s.cyan('━━ webhook')} the server's page on the directory has the bot's webhook: ${url}`);
  for (const delivery of WEBHOOK_DELIVERIES) {
    const seen = new Set(session.standIn.channelMessages(channelId).map((m) => m.id));
    const status = await bounded(
      delivery.send(emulator, guildId),
      session.timeoutMs,
      'the delivery',
      session.signal,
    );
    write(s.dim(`   the directory delivers ${delivery.what}: the bot answers ${status}`));
    if (status !== 200) throw new SandboxError(`the webhook answered ${status} to ${delivery.what}`);
    const message = await bounded(
      session.standIn.waitForMessage(channelId, (m) => !seen.has(m.id)),
      session.timeoutMs,
      `the announcement of ${delivery.what}`,
      session.signal,
    );
    write(`   the bot posts in #${CHANNEL}:`);
    const context = { nowMs: Date.now(), style: s, names: session.names, indent: '   ' };
    for (const line of renderMessage(message, context)) write(line);
  }
}

// -------------------------------------------------------------------------------------------------
// The directory's v3 notifications

/**
 * A review and an up given on the directory's site: the directory tells the bot over its
 * notifications WebSocket (the key's account owns the sample server), and the bot announces the
 * review in the webhook's channel and records the up.
 */
async function notificationsPart(
  session: Session,
  world: { bot: BotApp; emulator: Emulator; guildId: string; channelId: string },
): Promise<void> {
  const { style: s, write } = session;
  const { bot, emulator, guildId, channelId } = world;
  write();
  write(`${s.cyan('━━ notifications')} the directory's v3 WebSocket: ${emulator.v3.notifyUrl}`);
  await bounded(
    (async () => {
      while (bot.notifications?.state !== 'ready') await new Promise((r) => setTimeout(r, 20));
    })(),
    session.timeoutMs,
    'the notifications connection',
    session.signal,
  );
  const seen = new Set(session.standIn.channelMessages(channelId).map((m) => m.id));
  emulator.v3.comment('comment_added', guildId, USER.id, {
    content: 'Лучший сервер! **Заходите** @everyone',
    rating: 5,
  });
  write(s.dim("   a member leaves a review on the server's page on the site"));
  const message = await bounded(
    session.standIn.waitForMessage(channelId, (m) => !seen.has(m.id)),
    session.timeoutMs,
    'the announcement of the review',
    session.signal,
  );
  write(`   the bot posts in #${CHANNEL}:`);
  const context = { nowMs: Date.now(), style: s, names: session.names, indent: '   ' };
  for (const line of renderMessage(message, context)) write(line);
}

// -------------------------------------------------------------------------------------------------
// Start-up and shutdown

export function defaultLogFile(): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return join(tmpdir(), `directory-bot-sandbox-${stamp}-${process.pid}.log`);
}

function openLog(path: string): Promise<WriteStream> {
  return new Promise((resolve, reject) => {
    const stream = createWriteStream(path, { flags: 'a' });
    stream.once('open', () => {
      stream.off('error', reject);
      resolve(stream);
    });
    stream.once('error', reject);
  });
}

function closeLog(stream: WriteStream): Promise<void> {
  return new Promise((resolve) => stream.end(() => resolve()));
}

/** Runs the scripted session; resolves when every step went as expected and everything is shut down. */
export async function runSandbox(options: RunSandboxOptions): Promise<void> {
  const { out } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  const s = createStyle(options.color ?? wantsColor(out, process.env.NO_COLOR));
  const write = (line = ''): void => {
    out.write(`${line}\n`);
  };
  // Fatal bot errors (a refused token) end the session as Ctrl-C would.
  const fatal = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, fatal.signal]) : fatal.signal;
  const logPath = options.logFile === undefined ? defaultLogFile() : options.logFile;

  let stage: StandIns | undefined;
  let bot: BotApp | undefined;
  /** The bot's store: the sandbox is a fresh world each run, with nothing of a previous one to answer. */
  let dataDir: string | undefined;
  /** Settles when the login does; destroying the client in the middle of it leaves it reconnecting. */
  let login: Promise<unknown> = Promise.resolve();
  let log: WriteStream | undefined;
  let failure: unknown;
  const startedAt = performance.now();
  let passed = 0;
  /** A server being started: should the wait end first, it is closed whenever it comes up. */
  const started = async <T extends { close(): Promise<void> }>(work: Promise<T>, what: string) => {
    try {
      return await bounded(work, START_BOUND_MS, what, signal);
    } catch (err) {
      work.then((server) => server.close()).catch(() => undefined);
      throw err;
    }
  };

  try {
    if (logPath !== null) log = await bounded(openLog(logPath), START_BOUND_MS, `the log file ${logPath}`);
    // No rate limits in the emulator, generous ones in the bot: the session shows answers, not waits.
    const applicationId = snowflake();
    const guild = makeGuild({
      id: IDS.serverFresh,
      name: GUILD_NAME,
      icon: GUILD_ICON,
      channels: [CHANNEL],
      memberCount: 438,
      presenceCount: 120,
      owner_id: USER.id,
    });
    stage = await started(
      startStandIns({
        emulator: { rateLimits: false },
        discord: {
          applicationId,
          botUser: { id: applicationId, username: BOT_NAME },
          guilds: [guild],
          users: [...KNOWN_USERS],
        },
      }),
      'the directory emulator and the Discord stand-in',
    );
    const { emu: emulator, discord: standIn } = stage;

    options.setUp?.({ emulator, standIn });

    dataDir = mkdtempSync(join(tmpdir(), 'directory-bot-sandbox-'));
    const handled = new HandledLines(log);
    const rig = await createRigBot({
      env: rigEnvironment(
        {
          directoryUrl: emulator.url,
          discordRestUrl: standIn.restUrl,
          discordToken: standIn.token,
          dataDir,
        },
        {
          DIRECTORY_API_VERSION: 'v3',
          DIRECTORY_TOKEN: V3_KEYS.staff,
          DIRECTORY_TIMEOUT_MS: String(Math.max(100, Math.floor(timeoutMs / 2))),
          DIRECTORY_RATE_LIMIT: '1000/1000',
          LOG_LEVEL: 'debug',
          WEBHOOK_PORT: '0',
          WEBHOOK_HOST: '127.0.0.1',
        },
      ),
      log: handled,
      onFatal: (reason) => fatal.abort(new SandboxError(`the bot stopped: ${reason}`)),
    });
    bot = rig.app;
    const starting = rig.start(START_BOUND_MS);
    login = rig.login;
    await bounded(starting, START_BOUND_MS, 'the bot to log in and be ready', signal);

    write(s.bold('Directory bot sandbox'));
    write(
      s.dim('The real bot with its real commands, against two local stand-ins with sample data. No tokens;'),
    );
    write(s.dim('nothing leaves 127.0.0.1.'));
    write(`  directory emulator  ${emulator.url}`);
    write(`  Discord stand-in    ${standIn.restUrl}`);
    write(`  server              ${GUILD_NAME} (${guild.id}), channel #${CHANNEL}`);
    write(`  you are             ${USER.username} (${USER.id}), the server's owner`);

    const names = new Map(KNOWN_USERS.map((u) => [u.id, u.global_name ?? u.username]));
    const session: Session = {
      standIn,
      handled,
      guildId: guild.id,
      timeoutMs,
      signal,
      write,
      style: s,
      names,
    };
    const results: StepResult[] = [];
    const channelId = guild.channels[0]?.id;
    if (!channelId) throw new SandboxError('the sample server has no channel');
    for (const [index, step] of SCRIPT.entries()) {
      try {
        results.push(await runStep(session, step, index, results));
        passed += 1;
      } catch (err) {
        write(s.red(`   ✗ ${messageOf(err)}`));
        throw new SandboxError(
          `step ${index + 1}/${SCRIPT.length} (${describeStep(step)}): ${messageOf(err)}`,
          {
            cause: err,
          },
        );
      }
    }
    await webhookPart(session, { bot, emulator, guildId: guild.id, channelId });
    await notificationsPart(session, { bot, emulator, guildId: guild.id, channelId });
  } catch (err) {
    failure = err instanceof SandboxError ? err : new SandboxError(messageOf(err), { cause: err });
  }

  // Shutdown: every part bounded, every part tried even when one fails.
  const problems: string[] = [];
  // Never less than a few seconds, however short the steps' bound: a half-done login must finish.
  const shutdownMs = Math.max(timeoutMs, 5_000);
  const stop = async (what: string, work: (() => Promise<void>) | undefined): Promise<void> => {
    if (!work) return;
    try {
      await bounded(work(), shutdownMs, what);
    } catch (err) {
      problems.push(`${what}: ${messageOf(err)}`);
    }
  };
  const [app, standIns, logStream, data] = [bot, stage, log, dataDir];
  await stop('stopping the bot', app && (() => login.then(() => app.stop())));
  await stop(
    'removing the data directory',
    data === undefined ? undefined : async () => rmSync(data, { recursive: true, force: true }),
  );
  await stop('closing the Discord stand-in and the directory emulator', standIns && (() => standIns.close()));
  await stop('closing the log file', logStream && (() => closeLog(logStream)));

  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  write();
  if (failure === undefined && problems.length === 0) {
    write(
      s.green(`✓ ${passed} of ${SCRIPT.length} steps as expected in ${seconds} s; everything shut down.`),
    );
  } else {
    write(s.red(`✗ ${passed} of ${SCRIPT.length} steps as expected (${seconds} s).`));
  }
  if (logPath !== null) write(`Bot logs: ${logPath}`);
  if (failure !== undefined) throw failure;
  if (problems.length > 0) throw new SandboxError(`shutdown did not finish: ${problems.join('; ')}`);
}

/**
 * The rig: the real bot (createBot with the real command registry, the real discord.js client and
 * directory client) between the Discord stand-in (test/discord) and the directory emulator
 * (test/emulator), all on 127.0.0.1. The end-to-end harness, the sandbox, the benchmark and the
 * in-process operations tests start the bot here, and learn the one same way that an interaction
 * was handled: the router's "interaction handled" log line for the interaction's user
 * (HandledLines; isHandled for the log of a bot in a child process).
 * Imported by bench/ and the sandbox: nothing here may import vitest.
 */
import { Events } from 'discord.js';
import type { DestinationStream } from 'pino';
import { registry } from '../../commands/index.js';
import { type BotApp, type BotOptions, createBot } from '../../src/app/bot.js';
import { type Config, type Environment, loadConfig, secretsOf } from '../../src/config/env.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { Metrics } from '../../src/ops/metrics.js';
import { type DiscordStandIn, type StandInOptions, startDiscordStandIn } from '../discord/index.js';
import { type Emulator, type EmulatorOptions, startEmulator, TOKENS } from '../emulator/index.js';
import { assertLocal } from './local.js';
import { type LogEntry, parseLogLine } from './logs.js';
import { START_BOUND_MS, withTimeout } from './wait.js';

export { START_BOUND_MS } from './wait.js';

/** The router's line for each interaction, once answered (src/interactions/router.ts). */
export const HANDLED_MSG = 'interaction handled';

/** The "interaction handled" line, of `userId`'s interaction when given. */
export function isHandled(entry: LogEntry, userId?: string): boolean {
  return entry.msg === HANDLED_MSG && (userId === undefined || entry.userId === userId);
}

interface HandledWaiter {
  userId: string;
  resolve: (entry: LogEntry) => void;
  reject: (error: Error) => void;
  finish: () => void;
}

/**
 * The bot's log destination: each line goes on to `forward` (a LogSink, a file; none: dropped), and
 * an "interaction handled" line settles the waits for its user. Lines of no waited-for user are
 * not kept, so that a long benchmark holds no log.
 */
export class HandledLines implements DestinationStream {
  readonly #waiters = new Set<HandledWaiter>();

  constructor(readonly forward?: DestinationStream) {}

  write(line: string): void {
    this.forward?.write(line);
    if (this.#waiters.size === 0 || !line.includes(`"${HANDLED_MSG}"`)) return;
    const entry = parseLogLine(line.trim());
    if (entry === undefined || !isHandled(entry)) return;
    for (const waiter of [...this.#waiters]) {
      if (entry.userId === waiter.userId) {
        waiter.finish();
        waiter.resolve(entry);
      }
    }
  }

  /**
   * The next "interaction handled" line of `userId`'s interaction: call it before sending the
   * interaction. Rejects after `timeoutMs` (`timed out after … waiting for <what>`), on `signal`'s
   * abort (with its reason) or on close(); a wait left unawaited (the send failed) is never
   * reported as an unhandled rejection.
   */
  waitFor(
    userId: string,
    timeoutMs: number,
    options: { what?: string; signal?: AbortSignal } = {},
  ): Promise<LogEntry> {
    const { what = `"${HANDLED_MSG}" for user ${userId}`, signal } = options;
    const wait = new Promise<LogEntry>((resolve, reject) => {
      const onAbort = (): void => {
        waiter.finish();
        const reason: unknown = signal?.reason;
        reject(reason instanceof Error ? reason : new Error(String(reason ?? 'aborted')));
      };
      const timer = setTimeout(() => {
        waiter.finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const waiter: HandledWaiter = {
        userId,
        resolve,
        reject,
        finish: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.#waiters.delete(waiter);
        },
      };
      this.#waiters.add(waiter);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    wait.catch(() => undefined);
    return wait;
  }

  /** Rejects every wait still open. */
  close(): void {
    for (const waiter of [...this.#waiters]) {
      waiter.finish();
      waiter.reject(new Error(`the bot's log closed while waiting for "${HANDLED_MSG}"`));
    }
  }
}

// ---- the stand-ins --------------------------------------------------------------------------------

export interface StandIns {
  emu: Emulator;
  discord: DiscordStandIn;
  close(): Promise<void>;
}

/** The directory emulator and the Discord stand-in, in this process; neither is left open on a failure. */
export async function startStandIns(
  options: { emulator?: EmulatorOptions; discord?: StandInOptions } = {},
): Promise<StandIns> {
  const emu = await startEmulator(options.emulator);
  let discord: DiscordStandIn;
  try {
    discord = await startDiscordStandIn(options.discord);
  } catch (err) {
    await emu.close();
    throw err;
  }
  return {
    emu,
    discord,
    async close() {
      try {
        await discord.close();
      } finally {
        await emu.close();
      }
    },
  };
}

/** Where the bot finds the stand-ins (in this process or in child processes) and keeps its store. */
export interface RigPlaces {
  directoryUrl: string;
  discordRestUrl: string;
  discordToken: string;
  dataDir: string;
}

/** The bot's environment between the stand-ins, with `overrides` (rate limits, log level …). */
export function rigEnvironment(places: RigPlaces, overrides: Environment = {}): Environment {
  const env: Environment = {
    DATA_DIR: places.dataDir,
    DIRECTORY_API_URL: places.directoryUrl,
    // The interface most of the suite was written against; a v3 test says DIRECTORY_API_VERSION=v3.
    DIRECTORY_API_VERSION: 'v2',
    DIRECTORY_TOKEN: TOKENS.serviceBot,
    DISCORD_TOKEN: places.discordToken,
    DISCORD_API_URL: places.discordRestUrl,
    ...overrides,
  };
  // v3 opens the directory's notifications: the emulator's, never BotiCord's own address.
  if (env.DIRECTORY_API_VERSION === 'v3' && env.DIRECTORY_NOTIFY_URL === undefined) {
    env.DIRECTORY_NOTIFY_URL = `${places.directoryUrl.replace(/^http/, 'ws')}/websocket/`;
  }
  return env;
}

// ---- the bot ----------------------------------------------------------------------------------------

export interface RigBotOptions extends Omit<BotOptions, 'config' | 'logger' | 'registry' | 'metrics'> {
  /** The whole environment (rigEnvironment); both addresses must be on 127.0.0.1. */
  env: Environment;
  /** The log's destination and the handled waits (default: a new HandledLines, lines dropped). */
  log?: HandledLines;
  /** Give the logger the secrets to scrub, as main.ts does (default true). */
  scrubSecrets?: boolean;
  /** The bot's metrics, made with its logger (createMetrics), as main.ts wires them. */
  metrics?: (logger: Logger) => Metrics;
}

export interface RigBot {
  app: BotApp;
  config: Config;
  logger: Logger;
  metrics: Metrics | undefined;
  /** The waits for handled interactions (and the log's destination). */
  handled: HandledLines;
  /** The secrets of the configuration (tokens), for the leak scans. */
  secrets: string[];
  /**
   * Logs in and resolves once the client is ready; rejects after `timeoutMs` (START_BOUND_MS).
   * Call once.
   */
  start(timeoutMs?: number): Promise<void>;
  /** The login's promise once start() was called (settled or not): stop() after it, not during it. */
  login: Promise<unknown>;
}

/** createBot with the real registry, its log into `log`; not started. */
export async function createRigBot(options: RigBotOptions): Promise<RigBot> {
  const { env, log = new HandledLines(), scrubSecrets = true, metrics: makeMetrics, ...botOptions } = options;
  assertLocal(env.DIRECTORY_API_URL, 'DIRECTORY_API_URL');
  assertLocal(env.DISCORD_API_URL, 'DISCORD_API_URL');
  const config = loadConfig(env);
  const secrets = secretsOf(config);
  const logger = createLogger({
    level: config.logLevel,
    secrets: scrubSecrets ? secrets : [],
    destination: log,
  });
  const metrics = makeMetrics?.(logger);
  const app = await createBot({ ...botOptions, config, logger, registry, ...(metrics ? { metrics } : {}) });
  const rig: RigBot = {
    app,
    config,
    logger,
    metrics,
    handled: log,
    secrets,
    login: Promise.resolve(),
    async start(timeoutMs = START_BOUND_MS) {
      const ready = app.client.isReady()
        ? Promise.resolve()
        : new Promise<void>((resolve) => app.client.once(Events.ClientReady, () => resolve()));
      const login = app.start();
      rig.login = login.catch(() => undefined);
      await withTimeout(
        login.then(() => ready),
        timeoutMs,
        'the bot to log in and be ready',
      );
    },
  };
  return rig;
}

/** createRigBot, started and ready. */
export async function startRigBot(options: RigBotOptions, readyTimeoutMs?: number): Promise<RigBot> {
  const rig = await createRigBot(options);
  await rig.start(readyTimeoutMs);
  return rig;
}

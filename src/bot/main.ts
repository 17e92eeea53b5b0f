#!/usr/bin/env node
/** `npm start`: the bot. */
import { registry } from '../../commands/index.js';
import { secretsOf } from '../config/env.js';
import { createLogger } from '../log/logger.js';
import { createBot } from './app.js';
import { loadOrExit } from './startup.js';

const SHUTDOWN_GRACE_MS = 8_000;

const config = loadOrExit(['discordToken']);
const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) });
if (!config.directory.token) {
  logger.warn('DIRECTORY_TOKEN is not set: look-ups work, /up, comments and server reports will not');
}

let exiting = false;
const bot = createBot({
  config,
  logger,
  registry,
  onFatal: (reason) => {
    process.stderr.write(`${reason}\n`);
    void shutdown(1);
  },
});

async function shutdown(code: number): Promise<void> {
  if (exiting) {
    // A second signal: leave at once.
    process.exit(code || 1);
  }
  exiting = true;
  logger.info({ inFlight: bot.router.inFlight }, 'shutting down');
  const deadline = Date.now() + SHUTDOWN_GRACE_MS;
  while (bot.router.inFlight > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    await bot.stop();
  } catch (err) {
    logger.error({ err }, 'error while shutting down');
  }
  logger.flush();
  process.exit(code);
}

process.on('SIGTERM', () => void shutdown(0));
process.on('SIGINT', () => void shutdown(0));
process.on('unhandledRejection', (err) => {
  logger.error({ err }, 'unhandled rejection');
});

try {
  await bot.start();
} catch (err) {
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  const message =
    code === 'TokenInvalid'
      ? 'Discord rejected DISCORD_TOKEN: check the token in the Discord developer portal'
      : `could not connect to Discord: ${err instanceof Error ? err.message : String(err)}`;
  logger.fatal({ err }, message);
  process.stderr.write(`${message}\n`);
  await bot.stop().catch(() => undefined);
  logger.flush();
  process.exit(1);
}

/**
 * Shared start-up for the bot's entry points: configuration problems, a store that cannot be
 * opened and an operations endpoint that cannot listen end in one clear line.
 */
import { type Config, ConfigError, loadConfig, readEnvironment } from '../config/env.js';
import { listenProblem } from '../http/listener.js';
import { type OpsServer, type OpsServerOptions, startOpsServer } from '../ops/server.js';
import { StoreError } from '../store/errors.js';

/**
 * Loads the configuration or exits 2 with a readable message (never a stack trace, never a secret).
 * `databaseUrl`: this mode runs several processes, which SQLite cannot serve; a shard process
 * requires it of itself.
 */
export function loadOrExit(
  require: ReadonlyArray<'discordToken' | 'applicationId' | 'databaseUrl' | 'restProxyPort'> = [],
): Config {
  let config: Config;
  try {
    config = loadConfig(readEnvironment());
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const missing: string[] = [];
  if (require.includes('discordToken') && !config.discord.token) {
    missing.push(
      "DISCORD_TOKEN is not set: put the bot's token from the Discord developer portal in the environment or in .env",
    );
  }
  if (require.includes('applicationId') && !config.discord.applicationId) {
    missing.push("DISCORD_APPLICATION_ID is not set: the application's ID from the Discord developer portal");
  }
  if ((require.includes('databaseUrl') || config.sharding.isChild) && !config.databaseUrl) {
    missing.push(
      'DATABASE_URL is not set: npm run start:sharded runs a process per shard, and SQLite serves one ' +
        'process; set it to a PostgreSQL database (postgres://user:password@host:port/database)',
    );
  }
  if (require.includes('restProxyPort') && config.restProxy.port === undefined) {
    missing.push('DISCORD_REST_PROXY_PORT is not set: the port the REST proxy listens on (for example 8080)');
  }
  if (missing.length > 0) {
    process.stderr.write(`${missing.join('\n')}\n`);
    process.exit(2);
  }
  return config;
}

/** The operations endpoint, or exit 1 with one line saying what to change (never a stack trace). */
export async function startOpsOrExit(options: OpsServerOptions & { host: string }): Promise<OpsServer> {
  try {
    return await startOpsServer(options);
  } catch (err) {
    process.stderr.write(
      `the operations endpoint could not start: ${listenProblem(err, options.host, options.port)}\n`,
    );
    process.exit(1);
  }
}

/**
 * What opens the store (createBot, createServices), or exit 1 with the one line saying why the
 * store cannot be opened or migrated (never a password, never a stack trace).
 */
export async function openOrExit<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}

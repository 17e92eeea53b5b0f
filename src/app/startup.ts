/**
 * Shared start-up for the bot's entry points: configuration problems, a store that cannot be
 * opened and an operations endpoint that cannot listen end in one clear line, in the operator's
 * language (LC_ALL, LC_MESSAGES or LANG: i18n/operator.ts).
 */
import { type Config, ConfigError, loadConfig, readEnvironment } from '../config/env.js';
import { listenProblem } from '../http/listener.js';
import { type OperatorTranslate, operatorLanguage, operatorTranslator } from '../i18n/operator.js';
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
  const env = readEnvironment();
  const t = operatorTranslator(operatorLanguage(env));
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const missing: string[] = [];
  if (require.includes('discordToken') && !config.discord.token) {
    missing.push(t('start.missingDiscordToken'));
  }
  if (require.includes('applicationId') && !config.discord.applicationId) {
    missing.push(t('start.missingApplicationId'));
  }
  if ((require.includes('databaseUrl') || config.sharding.isChild) && !config.databaseUrl) {
    missing.push(t('start.missingDatabaseUrl'));
  }
  if (require.includes('restProxyPort') && config.restProxy.port === undefined) {
    missing.push(t('start.missingRestProxyPort'));
  }
  if (missing.length > 0) {
    process.stderr.write(`${missing.join('\n')}\n`);
    process.exit(2);
  }
  return config;
}

/** The operator's language from the environment, for an entry point's own lines (deploy.ts, sharded.ts). */
export function operatorT(): OperatorTranslate {
  return operatorTranslator(operatorLanguage(readEnvironment()));
}

/** The operations endpoint, or exit 1 with one line saying what to change (never a stack trace). */
export async function startOpsOrExit(options: OpsServerOptions & { host: string }): Promise<OpsServer> {
  try {
    return await startOpsServer(options);
  } catch (err) {
    const problem = listenProblem(err, options.host, options.port);
    process.stderr.write(`${operatorT()('start.opsFailed', { problem })}\n`);
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

/**
 * Shared start-up for the bot's entry points: configuration problems, and an operations endpoint
 * that cannot listen, end in one clear line.
 */
import { type Config, ConfigError, loadConfig, readEnvironment } from '../config/env.js';
import { listenProblem, type OpsServer, type OpsServerOptions, startOpsServer } from '../ops/server.js';

/** Loads the configuration or exits 2 with a readable message (never a stack trace, never a secret). */
export function loadOrExit(require: ReadonlyArray<'discordToken' | 'applicationId'> = []): Config {
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

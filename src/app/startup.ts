/** Shared start-up for the bot's entry points: configuration problems end in one clear line. */
import { type Config, ConfigError, loadConfig, readEnvironment } from '../config/env.js';
import { checkInterval } from '../tasks/stats-poster.js';

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

/** STATS_INTERVAL under 15 minutes is refused unless the documented override is set. */
export function checkStatsInterval(config: Config): void {
  const check = checkInterval(config.stats.intervalMs, config.stats.allowShortInterval);
  if (!check.ok) {
    process.stderr.write(`Invalid configuration:\n  - ${check.message}\n`);
    process.exit(2);
  }
}

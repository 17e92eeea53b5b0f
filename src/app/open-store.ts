/**
 * The bot's store, opened the one way every process opens it: the SQLite file in DATA_DIR or
 * PostgreSQL at DATABASE_URL, each statement timed for the metrics and traced when tracing is on.
 * The entry point opens it first (main.ts, before the bot's modules load: early-resume.ts), and
 * createServices when it is given none.
 */
import type { Config } from '../config/env.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import { openStore, type Store } from '../store/index.js';
import { traceStatement } from '../store/query-timing.js';

export async function openBotStore(options: {
  config: Config;
  logger: Logger;
  metrics?: Metrics | undefined;
}): Promise<Store> {
  const { config, logger, metrics } = options;
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    poolSize: config.databasePoolSize,
    dataDir: config.dataDir,
    lockWaitMs: config.sqliteLockWaitMs,
    logger,
    // Each statement's time for the metrics, and as a span when tracing is on.
    onQuery:
      metrics || config.tracing
        ? (event) => {
            metrics?.storeQuery(event);
            traceStatement(event);
          }
        : undefined,
  });
  logger.info({ engine: store.engine, location: store.location }, 'store open');
  return store;
}

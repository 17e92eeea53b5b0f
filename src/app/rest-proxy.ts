#!/usr/bin/env node
/**
 * `node dist/src/app/rest-proxy.js`: the Discord REST proxy several hosts share, so that their
 * bot-token requests keep one global limit (src/gateway/rest-proxy.ts says how it waits). Listens
 * on DISCORD_REST_PROXY_PORT and DISCORD_REST_PROXY_HOST, sends upstream to DISCORD_API_URL
 * (Discord's by default); GET /healthz is its own. On SIGTERM or SIGINT it stops taking
 * connections and lets the requests in flight finish (5 s at most), then exits. It needs no token:
 * each request carries its host's.
 */
import { secretsOf } from '../config/env.js';
import { RestProxyListenError, startRestProxy } from '../gateway/rest-proxy.js';
import { createLogger } from '../log/logger.js';
import { installShutdown, SHUTDOWN_HARD_LIMIT_MS } from './shutdown.js';
import { loadOrExit } from './startup.js';

const config = loadOrExit(['restProxyPort']);
const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) }).child({
  role: 'rest-proxy',
});

const proxy = await startRestProxy({
  upstream: config.discord.apiUrl,
  port: config.restProxy.port as number,
  host: config.restProxy.host,
  globalPerSecond: config.discord.globalPerSecond,
  logger,
}).catch((err: unknown) => {
  if (!(err instanceof RestProxyListenError)) throw err;
  process.stderr.write(`${err.message}\n`);
  logger.flush();
  process.exit(1);
});

installShutdown({ logger, hardLimitMs: SHUTDOWN_HARD_LIMIT_MS, steps: [() => proxy.close()] });

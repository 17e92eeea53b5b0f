#!/usr/bin/env node
/**
 * Docker HEALTHCHECK: `node dist/src/ops/healthcheck.js` exits 0 when
 * http://127.0.0.1:$HTTP_PORT/healthz answers 200 within 3 s, and 1 otherwise. With
 * `--rest-proxy`, the REST proxy's (src/app/rest-proxy.ts) on DISCORD_REST_PROXY_PORT.
 */
import { readEnvironment } from '../config/env.js';
import { runHealthcheck } from './health-probe.js';

try {
  process.exitCode = await runHealthcheck(
    readEnvironment(),
    {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    },
    { portVariable: process.argv.includes('--rest-proxy') ? 'DISCORD_REST_PROXY_PORT' : 'HTTP_PORT' },
  );
} catch (err) {
  process.stderr.write(`healthcheck: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}

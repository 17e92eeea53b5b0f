// `npm run emulator`: the directory emulator on 127.0.0.1 for local work.
// Environment: PORT (default 8787), EMULATOR_COOLDOWN_MS (default 4 h),
// EMULATOR_NEXT_UP_STYLE (epoch | duration), EMULATOR_RATE_LIMITS=off, EMULATOR_LOG=off.
// Stops on SIGINT, SIGTERM or SIGHUP, and when its parent (npm) is gone.

import { type Emulator, type EmulatorOptions, startEmulator } from './server.js';
import { IDS, PRIVATE_BOT_SERVERS, TOKENS, V3_KEY_OWNERS, V3_KEYS } from './state.js';

function fail(message: string): never {
  process.stderr.write(`emulator: ${message}\n`);
  process.exit(2);
}

function intFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    fail(`${name} must be an integer in ${min}..${max}, got '${raw}'`);
  return n;
}

const style = process.env.EMULATOR_NEXT_UP_STYLE ?? 'epoch';
if (style !== 'epoch' && style !== 'duration') fail(`EMULATOR_NEXT_UP_STYLE must be epoch or duration`);

const options: EmulatorOptions = {
  port: intFromEnv('PORT', 8787, 0, 65535),
  cooldownMs: intFromEnv('EMULATOR_COOLDOWN_MS', 14_400_000, 0, Number.MAX_SAFE_INTEGER),
  nextUpStyle: style,
  ...(process.env.EMULATOR_RATE_LIMITS === 'off' ? { rateLimits: false } : {}),
  ...(process.env.EMULATOR_LOG === 'off'
    ? {}
    : {
        log: (r) =>
          process.stdout.write(`${new Date(r.at).toISOString()} ${r.status} ${r.method} ${r.path}\n`),
      }),
};

/** Started under `npm run emulator` after a killed one, the port is most often still taken by it. */
async function start(): Promise<Emulator> {
  try {
    return await startEmulator(options);
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? err.code : undefined;
    process.stderr.write(
      code === 'EADDRINUSE'
        ? `emulator: port ${options.port} on 127.0.0.1 is already in use (by an emulator still running?): stop it or set PORT\n`
        : `emulator: could not listen on 127.0.0.1 port ${options.port}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  }
}

const emulator = await start();

const lines = [
  `Directory emulator listening on ${emulator.url} (routes under /v1, /v2 and /v3)`,
  'For the bot and the CLI (the client adds the version to every path itself):',
  `  DIRECTORY_API_URL=${emulator.url}`,
  '  DIRECTORY_API_VERSION=v3   (the default: DIRECTORY_TOKEN a v3 key below; or v2 / v1 with a token below)',
  'Seeded tokens (v1: bare; v2: "<Kind> <token>"):',
  `  service bot  (Bot)        ${TOKENS.serviceBot}   bot ${IDS.serviceBot}`,
  `  plain bot    (Bot)        ${TOKENS.plainBot}   bot ${IDS.plainBot}`,
  `  private bot  (PrivateBot) ${TOKENS.privateBot}   bot ${IDS.privateBot}`,
  `  profile      (Profile)    ${TOKENS.profile}   user ${IDS.profileUser}`,
  `  other profile (Profile)   ${TOKENS.otherProfile}   user ${IDS.otherProfileUser}`,
  `Private bot servers: ${PRIVATE_BOT_SERVERS.join(', ')}`,
  `Servers: fresh ${IDS.serverFresh}, cooldown ${IDS.serverCooldown}, boosted ${IDS.serverBoosted}, ` +
    `not-updated ${IDS.serverNotUpdated}`,
  'API v3 (limit 25 per 10 s per key, then blocked 10 s), under the version segment:',
  '  GET /bots/:id, POST /bots/:id/stats, GET /servers/:id, GET /users/:id, GET /search-key',
  '  search (Meilisearch): POST /search/indexes/{bots|servers|comments}/search (the default',
  '  DIRECTORY_SEARCH_URL), with "Authorization: Bearer <key from GET /search-key>"',
  'Seeded v3 keys (bare in Authorization; each owns the bots/servers of its account):',
  ...(Object.keys(V3_KEYS) as (keyof typeof V3_KEYS)[]).map(
    (name) => `  ${name.padEnd(9)} ${V3_KEYS[name]}   user ${V3_KEY_OWNERS[name]}`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);

let stopping = false;
function shutdown(reason: string): void {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${reason}: shutting down\n`);
  emulator.close().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`emulator: close failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, shutdown);

// npm passes SIGINT and SIGTERM on to the script, but an npm killed outright or hung up on passes
// nothing, and the emulator would hold the port for good. Its parent gone, it is re-parented.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) shutdown('parent process gone');
}, 250).unref();

// `npm run emulator`: the directory emulator on 127.0.0.1 for local work.
// Environment: PORT (default 8787), EMULATOR_COOLDOWN_MS (default 4 h),
// EMULATOR_NEXT_UP_STYLE (epoch | duration), EMULATOR_RATE_LIMITS=off, EMULATOR_LOG=off.

import { type EmulatorOptions, startEmulator } from './server.js';
import { IDS, PRIVATE_BOT_SERVERS, TOKENS } from './state.js';

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

const emulator = await startEmulator(options);

const lines = [
  `Directory emulator listening on ${emulator.url} (routes under /v1 and /v2)`,
  `  base URL v1: ${emulator.url}/v1`,
  `  base URL v2: ${emulator.url}/v2`,
  'Seeded tokens (v1: bare; v2: "<Kind> <token>"):',
  `  service bot  (Bot)        ${TOKENS.serviceBot}   bot ${IDS.serviceBot}`,
  `  plain bot    (Bot)        ${TOKENS.plainBot}   bot ${IDS.plainBot}`,
  `  private bot  (PrivateBot) ${TOKENS.privateBot}   bot ${IDS.privateBot}`,
  `  profile      (Profile)    ${TOKENS.profile}   user ${IDS.profileUser}`,
  `  other profile (Profile)   ${TOKENS.otherProfile}   user ${IDS.otherProfileUser}`,
  `Private bot servers: ${PRIVATE_BOT_SERVERS.join(', ')}`,
  `Servers: fresh ${IDS.serverFresh}, cooldown ${IDS.serverCooldown}, boosted ${IDS.serverBoosted}, ` +
    `not-updated ${IDS.serverNotUpdated}`,
];
process.stdout.write(`${lines.join('\n')}\n`);

let stopping = false;
function shutdown(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: shutting down\n`);
  emulator.close().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`emulator: close failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);

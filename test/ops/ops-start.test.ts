/**
 * The operations endpoint's start as an operator meets it: a port already taken or an address
 * not of this machine ends `npm start` and `npm run start:sharded` with one line and exit 1 (no
 * stack trace), and the Docker image's port survives an env file's empty `HTTP_PORT=`, for the
 * bot and its HEALTHCHECK alike.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';
import { freshPlace } from '../store/places.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import {
  BotProcess,
  type BotScript,
  DIST_BOT,
  discordLikeToken,
  freePort,
  LOCALHOST,
  ROOT,
  runScript,
  START_BOUND_MS,
  withTimeout,
} from './helpers.js';

const STACK_LINE = /^\s+at /m;

let discord: DiscordStandIn;
let taken: Server;
let takenPort: number;

beforeAll(async () => {
  discord = await startDiscordStandIn({ shards: 1, token: discordLikeToken() });
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, LOCALHOST, resolve));
  takenPort = (taken.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => taken.close(() => resolve()));
  await discord.close();
});

function botEnv(env: Record<string, string>): Record<string, string> {
  return {
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.restUrl,
    SHARD_COUNT: '1',
    LOG_LEVEL: 'info',
    ...env,
  };
}

/**
 * The process's exit and its stderr, the process tree gone whatever happened. The sharded mode
 * gets the PostgreSQL schema it requires, of its own, dropped after.
 */
async function runToExit(script: BotScript, env: Record<string, string>) {
  const store = script === 'sharded.js' ? await freshPlace('postgres') : undefined;
  const bot = new BotProcess(script, botEnv({ ...store?.env, ...env }));
  try {
    const exit = await withTimeout(bot.exited, 15_000, `${script} to exit`);
    return { code: exit.code, stderr: bot.stderr, spawned: bot.seenPids.size };
  } finally {
    await bot.destroy();
    await store?.remove();
  }
}

// sharded.js requires PostgreSQL: without it, main.js only.
describe.each<BotScript>(HAS_POSTGRES ? ['main.js', 'sharded.js'] : ['main.js'])(
  '%s, when the operations endpoint cannot listen',
  (script) => {
    it('says that HTTP_PORT is in use in one line and exits 1', async () => {
      const result = await runToExit(script, { HTTP_PORT: String(takenPort), HTTP_HOST: LOCALHOST });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `the operations endpoint could not start: HTTP_PORT ${takenPort} is already in use on ${LOCALHOST}: ` +
          'stop what listens there or choose another HTTP_PORT',
      );
      expect(result.stderr).not.toMatch(STACK_LINE);
    });

    it("says that WEBHOOK_PORT (the directory's webhooks) is in use in one line and exits 1", async () => {
      const result = await runToExit(script, { WEBHOOK_PORT: String(takenPort), WEBHOOK_HOST: LOCALHOST });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `the webhook receiver could not start: WEBHOOK_PORT ${takenPort} is already in use on ${LOCALHOST}: ` +
          'stop what listens there or choose another WEBHOOK_PORT',
      );
      expect(result.stderr).not.toMatch(STACK_LINE);
    });

    it('says that HTTP_HOST is not an address of this machine in one line and exits 1', async () => {
      // TEST-NET-1: never assigned to a machine, so binding fails at once and nothing is sent.
      const result = await runToExit(script, { HTTP_PORT: '0', HTTP_HOST: '192.0.2.1' });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'the operations endpoint could not start: HTTP_HOST 192.0.2.1 is not an address of this machine: ' +
          'use 0.0.0.0 (every interface) or 127.0.0.1',
      );
    });

    it('reports a host with a port in it with the other bad variables, exit 2', async () => {
      const result = await runToExit(script, {
        HTTP_PORT: '0',
        HTTP_HOST: 'localhost:8080',
        LOG_LEVEL: 'loud',
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^Invalid configuration:\n/);
      expect(result.stderr).toContain('  - LOG_LEVEL: ');
      expect(result.stderr).toContain('  - HTTP_HOST: expected an IP address');
    });
  },
);

describe("the Docker image's defaults", () => {
  it('are in .env.defaults, not in ENV lines an env file would blank', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).not.toMatch(/^ENV\s+(HTTP_PORT|HTTP_HOST|DATA_DIR)\b/m);
    const written = /printf '([^']*)' > \.env\.defaults/.exec(dockerfile)?.[1];
    expect(written).toBeDefined();
    expect(parseEnv((written ?? '').replaceAll('\\n', '\n'))).toEqual({
      HTTP_PORT: '8080',
      // The bot's own default is 127.0.0.1: the probes come from outside the container.
      HTTP_HOST: '0.0.0.0',
      DATA_DIR: '/app/data',
    });
  });

  it('keep the port under an empty HTTP_PORT, for the bot and for the HEALTHCHECK', async () => {
    const port = await freePort();
    const cwd = mkdtempSync(join(tmpdir(), 'image-defaults-'));
    writeFileSync(join(cwd, '.env.defaults'), `HTTP_PORT=${port}\nHTTP_HOST=${LOCALHOST}\n`);
    // What `docker run --env-file .env` sets from the example's `HTTP_PORT=`.
    const env = { PATH: process.env.PATH ?? '', ...botEnv({ HTTP_PORT: '', LOG_LEVEL: 'info' }) };
    const bot = spawn(process.execPath, [join(DIST_BOT, 'main.js')], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => bot.once('exit', () => resolve()));
    try {
      let out = '';
      const listening = await withTimeout(
        new Promise<unknown>((resolve) => {
          bot.stdout.setEncoding('utf8').on('data', (chunk: string) => {
            out += chunk;
            const line = out.split('\n').find((l) => l.includes('"ops server listening"'));
            if (line) resolve(JSON.parse(line));
          });
        }),
        START_BOUND_MS,
        'the ops server to listen',
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; main.js wrote: ${out.slice(-1_000) || '(nothing)'}`);
      });
      expect(listening).toMatchObject({ port });
      const check = await runScript(join(ROOT, 'dist/src/ops/healthcheck.js'), [], {
        cwd,
        env: { HTTP_PORT: '' },
      });
      expect(check).toEqual({ code: 0, stdout: 'healthcheck: ok (HTTP 200)\n', stderr: '' });
    } finally {
      bot.kill('SIGTERM');
      await withTimeout(exited, 12_000, 'the bot to stop');
      rmSync(cwd, { recursive: true, force: true });
    }
    // Its own time plus START_BOUND_MS for the start-up on a busy machine.
  }, 90_000);
});

/**
 * A token pasted with a line break or a space inside, in the built bot and the built CLI: a
 * configuration error (exit 2) that names the variable and the slip and never shows the token,
 * rather than a network failure at the first request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';
import { type Emulator, startEmulator, TOKENS } from '../emulator/index.js';
import { BotProcess, discordLikeToken, ROOT, runScript, withTimeout } from '../ops/helpers.js';

const CLI = join(ROOT, 'dist/src/cli/main.js');
const HALF = 'zz-slipped-token-0123456789abcdef';
const SLIPPED = `${HALF}\n${HALF}`;

let discord: DiscordStandIn;
let emu: Emulator;
let cwd: string;

beforeAll(async () => {
  discord = await startDiscordStandIn({ shards: 1, token: discordLikeToken() });
  emu = await startEmulator({ rateLimits: false });
  cwd = mkdtempSync(join(tmpdir(), 'token-slips-'));
});

afterAll(async () => {
  await emu?.close();
  await discord?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

describe('npm start with a token that has a line break inside', () => {
  async function start(env: Record<string, string>) {
    const bot = new BotProcess('main.js', {
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.restUrl,
      DIRECTORY_API_URL: emu.url,
      DIRECTORY_API_VERSION: 'v2',
      DIRECTORY_TOKEN: TOKENS.serviceBot,
      SHARD_COUNT: '1',
      LOG_LEVEL: 'info',
      ...env,
    });
    try {
      const exit = await withTimeout(bot.exited, 15_000, 'the bot to exit');
      return { code: exit.code, output: bot.output(), stderr: bot.stderr };
    } finally {
      await bot.destroy();
    }
  }

  it.each(['DISCORD_TOKEN', 'DIRECTORY_TOKEN'])(
    '%s: exit 2, the slip named, the token not shown',
    async (name) => {
      const result = await start({ [name]: SLIPPED });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `Invalid configuration:\n  - ${name}: expected the token alone, as one word: it has a line break inside (value hidden)`,
      );
      expect(result.output).not.toContain(HALF);
    },
  );
});

describe('the directory CLI with a token that has a line break or a space inside', () => {
  const cli = (args: string[], env: Record<string, string>) =>
    runScript(CLI, args, { cwd, env: { DIRECTORY_API_URL: emu.url, DIRECTORY_API_VERSION: 'v2', ...env } });

  it('from DIRECTORY_TOKEN: exit 2, not "unavailable", the token not shown', async () => {
    const result = await cli(['token'], { DIRECTORY_TOKEN: SLIPPED });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'directory: invalid configuration: DIRECTORY_TOKEN: expected the token alone, as one word: ' +
        'it has a line break inside (value hidden)\n',
    });
    expect(emu.requests).toEqual([]);
  });

  it('from --token: exit 2, the flag named, the token not shown', async () => {
    for (const [token, slip] of [
      [SLIPPED, 'a line break'],
      [`${HALF} ${HALF}`, 'a space'],
    ]) {
      const result = await cli(['token', '--token', token ?? ''], {});
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `directory: invalid configuration: --token (DIRECTORY_TOKEN): expected the token alone, as one word: it has ${slip} inside (value hidden)\n`,
      );
      expect(`${result.stdout}${result.stderr}`).not.toContain(HALF);
    }
    expect(emu.requests).toEqual([]);
  });
});

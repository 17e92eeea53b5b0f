/**
 * The built entry points as a user runs them: `npm start` without a token or with a refused one,
 * `npm run start:sharded` without the PostgreSQL it needs, and `npm run deploy-commands` to a
 * guild and globally, against the Discord stand-in.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invitePermissions } from '../../src/discord/feature-permissions.js';
import { type DiscordStandIn, makeGuild, startDiscordStandIn } from '../discord/index.js';

const dist = (file: string) => fileURLToPath(new URL(`../../dist/src/app/${file}`, import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [dist(file)],
      // A clean environment and an empty working directory: no .env of the developer is read.
      {
        env: { PATH: process.env.PATH ?? '', ...env },
        cwd: mkdtempSync(join(tmpdir(), 'entry-')),
        timeout: 20_000,
      },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? null : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let discord: DiscordStandIn;
beforeAll(async () => {
  discord = await startDiscordStandIn({
    applicationId: '1234567890123456789',
    guilds: [makeGuild({ id: '722424773233213460', name: 'Dev guild' })],
  });
});
afterAll(async () => {
  await discord.close();
});

describe('npm start', () => {
  it('without DISCORD_TOKEN: one clear line, exit 2, no stack trace', async () => {
    const result = await run('main.js', {});
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^DISCORD_TOKEN is not set/);
    expect(result.stderr).not.toMatch(/\bat \S+ \(/);
  });

  it('with bad configuration: every problem in one message, exit 2, secrets not echoed', async () => {
    const result = await run('main.js', {
      DISCORD_TOKEN: 'secret-token-value-123',
      DIRECTORY_API_VERSION: 'v9',
      STATS_INTERVAL: '1m',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('DIRECTORY_API_VERSION: expected one of v3, v2, v1');
    expect(result.stderr).not.toContain('secret-token-value-123');
  });

  it('refuses a stats interval under 15 minutes unless the override is set', async () => {
    const result = await run('main.js', { DISCORD_TOKEN: 'x'.repeat(30), STATS_INTERVAL: '1m' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('at least 15 min');
    expect(result.stderr).toContain('STATS_ALLOW_SHORT_INTERVAL');
  });

  it('with a token Discord refuses: a clear message and exit 1', async () => {
    const token = 'refused-token-0123456789abcdef';
    const result = await run('main.js', {
      DISCORD_TOKEN: token,
      DISCORD_API_URL: discord.restUrl,
      LOG_LEVEL: 'silent',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Discord rejected DISCORD_TOKEN');
    expect(`${result.stdout}${result.stderr}`).not.toContain(token);
  });
});

describe('npm run start:sharded', () => {
  it('without DATABASE_URL: one clear line, exit 2, before anything is asked of Discord', async () => {
    const before = discord.requests.length;
    const result = await run('sharded.js', {
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.restUrl,
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^DATABASE_URL is not set: npm run start:sharded runs a process per shard/);
    expect(discord.requests.slice(before)).toEqual([]);
  });

  it('with a DATABASE_URL that is not PostgreSQL: exit 2, its password never shown', async () => {
    const result = await run('sharded.js', {
      DISCORD_TOKEN: discord.token,
      DATABASE_URL: 'mysql://root:db-password-4711@127.0.0.1/test',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '  - DATABASE_URL: expected a PostgreSQL URL, postgres://user:password@host:port/database ' +
        '(or postgresql://); this one starts with mysql: (value hidden)',
    );
    expect(result.stderr).not.toContain('db-password-4711');
  });
});

describe('npm run deploy-commands', () => {
  const env = () => ({
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.restUrl,
  });

  it('overwrites the commands of DEV_GUILD_ID, with Russian names and descriptions', async () => {
    const result = await run('deploy.js', { ...env(), DEV_GUILD_ID: '722424773233213460' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'Deployed 9 commands to guild 722424773233213460: /up, /bot, /server, /profile, /settings, /leaderboard, ' +
        '/setup, /help, "Directory card" (on a member)',
    );
    // Then the link that adds the bot with exactly what its features need (feature-permissions.ts).
    expect(result.stdout).toContain(
      `https://discord.com/oauth2/authorize?client_id=${discord.applicationId}&scope=bot+applications.commands&permissions=${invitePermissions()}`,
    );
    const commands = discord.commands('722424773233213460') as Array<{
      name: string;
      name_localizations?: Record<string, string>;
      default_member_permissions?: string | null;
    }>;
    expect(commands.map((c) => c.name).sort()).toEqual([
      'Directory card',
      'bot',
      'help',
      'leaderboard',
      'profile',
      'server',
      'settings',
      'setup',
      'up',
    ]);
    expect(commands.find((c) => c.name === 'up')?.name_localizations?.ru).toBe('ап');
    expect(commands.find((c) => c.name === 'Directory card')).toMatchObject({
      type: 2,
      name_localizations: { ru: 'Карточка в каталоге' },
      integration_types: [0, 1],
      contexts: [0, 1, 2],
    });
    // Manage Server (1 << 5) by default; admins can grant it further in Server Settings > Integrations.
    expect(commands.find((c) => c.name === 'settings')?.default_member_permissions).toBe('32');
    expect(commands.find((c) => c.name === 'setup')?.default_member_permissions).toBe('32');
    expect(commands.find((c) => c.name === 'up')?.default_member_permissions).toBeNull();
    const put = discord.requests.find((r) => r.method === 'PUT');
    expect(put?.path).toBe(`/applications/${discord.applicationId}/guilds/722424773233213460/commands`);
  });

  it('says it in Russian after the system locale (LANG), the link as it is', async () => {
    const result = await run('deploy.js', { ...env(), LANG: 'ru_RU.UTF-8' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Команды зарегистрированы глобально (9): /up, /bot');
    expect(result.stdout).toContain(
      `Пригласите бота по ссылке: https://discord.com/oauth2/authorize?client_id=`,
    );
    const missing = await run('deploy.js', { DISCORD_TOKEN: discord.token, LANG: 'ru_RU.UTF-8' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/DISCORD_APPLICATION_ID/);
    expect(missing.stderr).toMatch(/[а-я]/);
  });

  it('overwrites the global commands without DEV_GUILD_ID', async () => {
    const result = await run('deploy.js', env());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('globally');
    expect((discord.commands() as unknown[]).length).toBe(9);
  });

  it('needs DISCORD_APPLICATION_ID', async () => {
    const result = await run('deploy.js', { DISCORD_TOKEN: discord.token });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^DISCORD_APPLICATION_ID is not set/);
  });
});

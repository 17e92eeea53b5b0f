/**
 * The client's caches: discord.js warns on stderr, once per process, about each cache it does not
 * support limiting. The bot's client drops exactly those three warnings (the limits are deliberate,
 * uncached.test.ts covers what they break) and lets every other one through. Each case runs in a
 * fresh node process on the built client, since discord.js warns only once per process.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const built = pathToFileURL(`${root}dist/src/gateway/client.js`).href;

/** Makes a guild (the first one makes discord.js build its channel and role managers), then `after`. */
function script(make: 'createDiscordClient' | 'plain', after = ''): string {
  return `
    import { createRequire } from 'node:module';
    const { Client, GatewayIntentBits } = createRequire(${JSON.stringify(`${root}package.json`)})('discord.js');
    const { createDiscordClient, trimmedCache } = await import(${JSON.stringify(built)});
    const client = ${
      make === 'plain'
        ? 'new Client({ intents: [GatewayIntentBits.Guilds], makeCache: trimmedCache() })'
        : "createDiscordClient({ shards: 1, apiUrl: 'http://127.0.0.1:9/api' }).client"
    };
    client.guilds._add({
      id: '900000000000000001',
      name: 'Guild',
      channels: [{ id: '900000000000000002', type: 0, name: 'general' }],
      roles: [{ id: '900000000000000001', name: '@everyone', permissions: '0', position: 0, color: 0 }],
    });
    if (client.guilds.cache.size !== 1 || client.channels.cache.size !== 0) throw new Error('unexpected caches');
    ${after}
    await new Promise((resolve) => setTimeout(resolve, 20));
  `;
}

function stderrOf(source: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { cwd: root, timeout: 15_000, env: { PATH: process.env.PATH ?? '' } },
      (err, _stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stderr)),
    );
  });
}

const warned = (stderr: string): string[] =>
  [...stderr.matchAll(/UnsupportedCacheOverwriteWarning: Overriding the cache handling for (\w+)/g)].map(
    (m) => m[1] ?? '',
  );

describe('the client’s cache warnings', () => {
  it('discord.js warns about the channel and role caches the bot limits', async () => {
    const stderr = await stderrOf(script('plain'));
    expect(warned(stderr).sort()).toEqual(['ChannelManager', 'GuildChannelManager', 'RoleManager']);
  });

  it('the bot’s client drops those three warnings and lets every other warning through', async () => {
    const stderr = await stderrOf(
      script(
        'createDiscordClient',
        `process.emitWarning('Overriding the cache handling for GuildManager is unsupported and breaks functionality.', 'UnsupportedCacheOverwriteWarning');
         process.emitWarning('something else', 'OtherWarning');`,
      ),
    );
    expect(warned(stderr)).toEqual(['GuildManager']);
    expect(stderr).toContain('OtherWarning: something else');
  });
});

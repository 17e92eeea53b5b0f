import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { registry } from '../../commands/index.js';
import { createBot } from '../../src/bot/app.js';
import { loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/log/logger.js';
import { makeGuild, startDiscordStandIn } from '../discord/index.js';
import { IDS, startEmulator, TOKENS } from '../emulator/index.js';

it('smoke', async () => {
  const emu = await startEmulator({ rateLimits: false });
  const guild = makeGuild({ id: IDS.serverFresh, name: '@everyone <@&123> club' });
  const discord = await startDiscordStandIn({ guilds: [guild] });
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({ write(c: Buffer, _e, cb) { lines.push(c.toString()); cb(); } }),
  });
  const config = loadConfig({
    DIRECTORY_API_URL: emu.url,
    DIRECTORY_TOKEN: TOKENS.serviceBot,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.restUrl,
  });
  const bot = createBot({ config, logger, registry });
  await bot.start();
  const h = discord.sendCommand({ guildId: guild.id, name: 'up', locale: 'ru' });
  const first = await h.firstResponse();
  console.log('first', JSON.stringify(first), performance.now() - h.sentAt);
  await h.waitFor((r) => r.method === 'PATCH');
  console.log(JSON.stringify(h.view(), null, 1).slice(0, 1500));
  const h2 = discord.sendCommand({ guildId: guild.id, name: 'up' });
  await h2.waitFor((r) => r.method === 'POST' && r.path.startsWith('/webhooks'));
  console.log(JSON.stringify(h2.view(), null, 1).slice(0, 1500));
  const h3 = discord.sendCommand({ guildId: guild.id, name: 'bot', options: [{ type: 3, name: 'ref', value: 'kerdoku' }] });
  await h3.waitFor((r) => r.method === 'PATCH');
  console.log(JSON.stringify(h3.view().original?.components));
  console.log(lines.filter((l) => l.includes('interaction handled')).join(''));
  await bot.stop();
  await discord.close();
  await emu.close();
  expect(first.type).toBe(5);
});

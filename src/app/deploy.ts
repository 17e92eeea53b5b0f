#!/usr/bin/env node
/**
 * `npm run deploy-commands`: bulk-overwrites the slash commands, to DEV_GUILD_ID when it is set
 * (instant, for development), globally otherwise. Loads only the command definitions.
 */
import { REST } from '@discordjs/rest';
import { Routes } from 'discord.js';
import { commandDefinitions } from '../../commands/definitions.js';
import { loadOrExit } from './startup.js';

const config = loadOrExit(['discordToken', 'applicationId']);
const { token, applicationId, devGuildId, apiUrl } = config.discord;
const rest = new REST(apiUrl ? { api: apiUrl } : {}).setToken(token!);
const route = devGuildId
  ? Routes.applicationGuildCommands(applicationId!, devGuildId)
  : Routes.applicationCommands(applicationId!);
try {
  const result = (await rest.put(route, { body: commandDefinitions })) as unknown[];
  process.stdout.write(
    `Deployed ${result.length} commands ${devGuildId ? `to guild ${devGuildId}` : 'globally'}: ${commandDefinitions
      .map((c) => `/${c.name}`)
      .join(', ')}\n`,
  );
} catch (err) {
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 0;
  process.stderr.write(
    status === 401
      ? 'Discord rejected DISCORD_TOKEN\n'
      : `could not deploy the commands: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
}

#!/usr/bin/env node
/**
 * `npm run deploy-commands`: bulk-overwrites the commands (the slash commands and the context
 * menu's on a member), to DEV_GUILD_ID when it is set (instant, for development), globally
 * otherwise. Loads only the command definitions.
 */
import { REST } from '@discordjs/rest';
import { ApplicationCommandType, Routes } from 'discord.js';
import { deployedCommands } from '../../commands/definitions.js';
import { loadOrExit } from './startup.js';

const config = loadOrExit(['discordToken', 'applicationId']);
const { token, applicationId, devGuildId, apiUrl } = config.discord;
const rest = new REST(apiUrl ? { api: apiUrl } : {}).setToken(token!);
const route = devGuildId
  ? Routes.applicationGuildCommands(applicationId!, devGuildId)
  : Routes.applicationCommands(applicationId!);
try {
  const result = (await rest.put(route, { body: deployedCommands })) as unknown[];
  process.stdout.write(
    `Deployed ${result.length} commands ${devGuildId ? `to guild ${devGuildId}` : 'globally'}: ${deployedCommands
      .map((c) => (c.type === ApplicationCommandType.User ? `"${c.name}" (on a member)` : `/${c.name}`))
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

#!/usr/bin/env node
/**
 * `npm run deploy-commands`: bulk-overwrites the commands (the slash commands and the context
 * menu's on a member), to DEV_GUILD_ID when it is set (instant, for development), globally
 * otherwise. Loads only the command definitions. Then prints the link that invites the bot with
 * exactly the permissions its features need (discord/feature-permissions.ts).
 */
import { REST } from '@discordjs/rest';
import { ApplicationCommandType, Routes } from 'discord.js';
import { deployedCommands } from '../../commands/definitions.js';
import { inviteUrl } from '../discord/feature-permissions.js';
import { loadOrExit, operatorT } from './startup.js';

const config = loadOrExit(['discordToken', 'applicationId']);
const t = operatorT();
const { token, applicationId, devGuildId, apiUrl } = config.discord;
const rest = new REST(apiUrl ? { api: apiUrl } : {}).setToken(token!);
const route = devGuildId
  ? Routes.applicationGuildCommands(applicationId!, devGuildId)
  : Routes.applicationCommands(applicationId!);
try {
  const result = (await rest.put(route, { body: deployedCommands })) as unknown[];
  const list = deployedCommands
    .map((c) =>
      c.type === ApplicationCommandType.User ? t('deploy.onMember', { name: c.name }) : `/${c.name}`,
    )
    .join(', ');
  const count = result.length;
  process.stdout.write(
    `${devGuildId ? t('deploy.deployedGuild', { count, guild: devGuildId, list }) : t('deploy.deployedGlobal', { count, list })}\n`,
  );
  process.stdout.write(`${t('deploy.invite', { url: inviteUrl(applicationId!) })}\n`);
} catch (err) {
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 0;
  process.stderr.write(
    `${
      status === 401
        ? t('start.tokenRejected')
        : t('deploy.failed', { error: err instanceof Error ? err.message : String(err) })
    }\n`,
  );
  process.exit(1);
}

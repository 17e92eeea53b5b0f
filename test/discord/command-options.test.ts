// Slash commands with subcommands and channel, role and string options, as Discord sends them:
// `data.resolved` filled in, the member's `permissions` and the bot's `app_permissions` computed
// from the guild's roles and the channel's overwrites. Read back by an unmodified discord.js
// client (with its default caches and with the bot's trimmed ones).

import { once } from 'node:events';
import {
  ChannelType,
  type ChatInputCommandInteraction,
  type ClientOptions,
  Events,
  PermissionFlagsBits,
} from 'discord.js';
import { describe, expect, it } from 'vitest';
import { trimmedCache } from '../../src/gateway/client.js';
import {
  ALL_PERMISSIONS,
  botRoleOf,
  commandOption,
  makeGuild,
  makeRole,
  makeTextChannel,
  makeUser,
  type SendCommandOptions,
} from './index.js';
import { standInSession } from './test-session.js';

const session = standInSession();

interface Read {
  subcommand: string | null;
  channel: { id: string; name: string | null; type: ChannelType } | null;
  role: { id: string; name: string } | null;
  message: string | null;
  manageGuild: boolean | undefined;
  appCanSend: boolean;
}

/** What a /settings handler would read of the interaction. */
function read(i: ChatInputCommandInteraction): Read {
  const channel = i.options.getChannel('channel');
  const role = i.options.getRole('role');
  return {
    subcommand: i.options.getSubcommand(false),
    channel: channel ? { id: channel.id, name: channel.name, type: channel.type } : null,
    role: role ? { id: role.id, name: role.name } : null,
    message: i.options.getString('message'),
    manageGuild: i.memberPermissions?.has(PermissionFlagsBits.ManageGuild),
    appCanSend: i.appPermissions.has(PermissionFlagsBits.SendMessages),
  };
}

const cases: Array<[string, Partial<ClientOptions>]> = [
  ['default caches', {}],
  ["the bot's trimmed caches", { makeCache: trimmedCache() }],
];

describe.each(cases)('command options with %s', (_label, clientOptions) => {
  it('delivers /settings reminders channel role message with resolved data and permissions', async () => {
    const general = makeTextChannel({ name: 'general', position: 0 });
    const reminders = makeTextChannel({ name: 'reminders', position: 1 });
    const bumpers = makeRole({ name: 'Bumpers', position: 2, mentionable: true });
    const managers = makeRole({
      name: 'Managers',
      position: 3,
      permissions: PermissionFlagsBits.ManageGuild,
    });
    const guild = makeGuild({ channels: [general, reminders], roles: [bumpers, managers] });
    const admin = makeUser({ username: 'admin' });
    const member = makeUser({ username: 'member' });
    const si = await session.start({ guilds: [guild], users: [admin, member] });
    const client = session.client(si, clientOptions);
    const reads: Read[] = [];
    client.on(Events.InteractionCreate, (i) => {
      if (!i.isChatInputCommand()) return;
      reads.push(read(i));
      void i.reply({ content: 'ok', flags: 64 }).catch(() => undefined);
    });
    const isReady = once(client, Events.ClientReady);
    await client.login(si.token);
    await isReady;

    const settings = (extra: Partial<SendCommandOptions>): SendCommandOptions => ({
      guildId: guild.id,
      channelId: general.id,
      name: 'settings',
      options: [
        commandOption.subcommand('reminders', [
          commandOption.channel('channel', reminders.id),
          commandOption.role('role', bumpers.id),
          commandOption.string('message', '{role} the server can be raised again: {command}'),
        ]),
      ],
      ...extra,
    });
    const send = async (opts: SendCommandOptions) => {
      const handle = si.sendCommand(opts);
      await handle.firstResponse();
      return { handle, read: reads.at(-1)! };
    };

    const asAdmin = await send(settings({ user: admin, roles: [managers.id] }));
    expect(asAdmin.read).toEqual({
      subcommand: 'reminders',
      channel: { id: reminders.id, name: 'reminders', type: ChannelType.GuildText },
      role: { id: bumpers.id, name: 'Bumpers' },
      message: '{role} the server can be raised again: {command}',
      manageGuild: true,
      appCanSend: true,
    });
    const data = asAdmin.handle.payload.data as {
      resolved: { channels: Record<string, Record<string, unknown>>; roles: Record<string, unknown> };
    };
    expect(data.resolved.channels[reminders.id]).toMatchObject({
      id: reminders.id,
      name: 'reminders',
      type: 0,
      guild_id: guild.id,
    });
    const invoker = BigInt(data.resolved.channels[reminders.id]!.permissions as string);
    expect(invoker & PermissionFlagsBits.ManageGuild).toBe(PermissionFlagsBits.ManageGuild);
    expect(data.resolved.roles[bumpers.id]).toMatchObject({
      id: bumpers.id,
      name: 'Bumpers',
      mentionable: true,
    });

    // Without Manage Server, and with the bot unable to send in the channel the command came from.
    const botRole = botRoleOf(si.guilds.get(guild.id)!, si.botUser.id)!;
    si.setChannelOverwrites(general.id, [
      { id: botRole.id, type: 'role', deny: PermissionFlagsBits.SendMessages },
    ]);
    const asMember = await send(settings({ user: member }));
    expect(asMember.read).toMatchObject({ manageGuild: false, appCanSend: false });
    expect(asMember.read.channel?.id).toBe(reminders.id);
    // The channel the command came from, as Discord sends it: no overwrites, the member's permissions.
    const from = asMember.handle.payload.channel as Record<string, unknown>;
    expect(from).not.toHaveProperty('permission_overwrites');
    expect(from).toMatchObject({ id: general.id, name: 'general', guild_id: guild.id });
    expect(from.permissions).toBe((asMember.handle.payload.member as { permissions: string }).permissions);

    // The guild's owner has every permission; an explicit `permissions` wins over roles.
    const asOwner = await send(settings({ user: { id: guild.owner_id, username: 'owner' } }));
    expect((asOwner.handle.payload.member as { permissions: string }).permissions).toBe(ALL_PERMISSIONS);
    const granted = await send(settings({ user: member, permissions: PermissionFlagsBits.ManageGuild }));
    expect(granted.read.manageGuild).toBe(true);
    const forced = await send(settings({ user: admin, roles: [managers.id], appPermissions: 0n }));
    expect(forced.read.appCanSend).toBe(false);

    // Optional options left out: nothing to resolve for them.
    const bare = await send({
      guildId: guild.id,
      name: 'settings',
      user: admin,
      options: [commandOption.subcommand('show')],
    });
    expect(bare.read).toMatchObject({ subcommand: 'show', channel: null, role: null, message: null });
    expect((bare.handle.payload.data as { resolved?: unknown }).resolved).toBeUndefined();
  });
});

describe('command options the stand-in cannot resolve', () => {
  it('throws for a channel or role the guild does not have, unless the test resolves it itself', async () => {
    const guild = makeGuild();
    const si = await session.start({ guilds: [guild] });
    const unknown = '123456789012345678';
    expect(() =>
      si.sendCommand({
        guildId: guild.id,
        name: 'settings',
        options: [commandOption.channel('channel', unknown)],
      }),
    ).toThrow(/unknown channel/);
    expect(() =>
      si.sendCommand({ guildId: guild.id, name: 'settings', options: [commandOption.role('role', unknown)] }),
    ).toThrow(/unknown role/);
    const given = { id: unknown, name: 'elsewhere', type: 0, permissions: '0' };
    const handle = si.sendCommand({
      guildId: guild.id,
      name: 'settings',
      options: [commandOption.channel('channel', unknown)],
      resolved: { channels: { [unknown]: given } },
    });
    expect((handle.payload.data as { resolved: unknown }).resolved).toEqual({
      channels: { [unknown]: given },
    });
  });
});

describe('permissions on button clicks', () => {
  it("computes member.permissions and app_permissions in the button's channel, or takes them as given", async () => {
    const managers = makeRole({ name: 'Managers', permissions: PermissionFlagsBits.ManageGuild });
    const guild = makeGuild({ roles: [managers] });
    const si = await session.start({ guilds: [guild] });
    const channelId = guild.channels[0]!.id;
    const perms = (payload: Record<string, unknown>) => ({
      member: BigInt((payload.member as { permissions: string }).permissions),
      app: BigInt(payload.app_permissions as string),
    });
    const plain = perms(si.sendButton({ guildId: guild.id, customId: 'remind-me' }).payload);
    expect(plain.member & PermissionFlagsBits.ManageGuild).toBe(0n);
    expect(plain.app & PermissionFlagsBits.SendMessages).toBe(PermissionFlagsBits.SendMessages);
    const manager = perms(
      si.sendButton({ guildId: guild.id, customId: 'remind-me', roles: [managers.id] }).payload,
    );
    expect(manager.member & PermissionFlagsBits.ManageGuild).toBe(PermissionFlagsBits.ManageGuild);

    si.setChannelOverwrites(channelId, [
      { id: si.botUser.id, type: 'member', deny: PermissionFlagsBits.SendMessages },
    ]);
    expect(
      perms(si.sendButton({ guildId: guild.id, customId: 'remind-me' }).payload).app &
        PermissionFlagsBits.SendMessages,
    ).toBe(0n);
    const given = perms(
      si.sendButton({ guildId: guild.id, customId: 'remind-me', permissions: 8n, appPermissions: 2048n })
        .payload,
    );
    expect(given).toEqual({ member: 8n, app: 2048n });
  });
});

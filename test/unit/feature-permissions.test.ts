/**
 * The list of what each feature needs of Discord (discord/feature-permissions.ts) against what the
 * features do: each is run against a REST client that records its requests, and the permissions
 * Discord checks for those requests are derived from them (Discord's rules, below), then compared
 * with the feature's list. A feature that starts posting a file, giving a role or pinging a role
 * fails here until the list says so, and so does a list that asks for more than the feature uses.
 * Then the invite link, the words an admin reads (/settings show), and the admin guide's numbers.
 */
import { readFileSync } from 'node:fs';
import { PermissionFlagsBits, PermissionsBitField, Routes } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { notifyMe } from '../../commands/notify-me.js';
import {
  channelProblems,
  FEATURE_PERMISSIONS,
  FEATURES,
  type Feature,
  invitePermissions,
  inviteUrl,
  missingFor,
  type PermissionName,
} from '../../src/discord/feature-permissions.js';
import { channelPermissionsLookup } from '../../src/discord/permissions.js';
import { discordRoles } from '../../src/discord/roles.js';
import { LiveBoardSender } from '../../src/features/digests/live.js';
import { DigestSender } from '../../src/features/digests/send.js';
import { DiscordReminderSender } from '../../src/features/reminders/send.js';
import { discordRewardGranter } from '../../src/features/rewards/grant.js';
import { renderOverview } from '../../src/features/settings/render.js';
import { defaults, permissionProblems } from '../../src/features/settings/settings.js';
import { announceReview } from '../../src/features/webhooks/reviews.js';
import { catalogKeys, translator } from '../../src/i18n/index.js';
import { createLogger } from '../../src/log/logger.js';
import { encodeNotify } from '../../src/render/custom-id.js';
import type { GuildSettings } from '../../src/store/settings.js';
import { viewOf } from '../support/layout-view.js';

const GUILD = '722424773233213460';
const CHANNEL = '722424773233213461';
const ROLE = '722424773233213462';
const BOT = '722424773233213463';
const BOT_ROLE = '722424773233213464';
const MEMBER = '722424773233213465';
const OTHER_CHANNEL = '722424773233213466';
const NOW = 1_700_000_000_000;
const silent = createLogger({ level: 'silent' });
const en = translator('en-US');
const ru = translator('ru');

interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  route: string;
  body?: Record<string, unknown> | undefined;
  files?: unknown[] | undefined;
}

/**
 * A REST client that records every request and answers as Discord would when everything is
 * allowed: a message posted or edited gets an id; the guild's roles give the bot Manage Roles
 * and a role above ROLE; the member holds no role yet.
 */
function recordingRest() {
  const calls: Call[] = [];
  const record =
    (method: Call['method']) =>
    async (route: string, options: { body?: Record<string, unknown>; files?: unknown[] } = {}) => {
      calls.push({ method, route, body: options.body, files: options.files });
      if (method === 'GET' && route === Routes.guildRoles(GUILD)) {
        return [
          { id: GUILD, position: 0, permissions: '0', managed: false },
          { id: ROLE, position: 1, permissions: '0', managed: false },
          { id: BOT_ROLE, position: 2, permissions: String(PermissionFlagsBits.ManageRoles), managed: false },
        ];
      }
      if (method === 'GET' && route === Routes.guildMember(GUILD, BOT)) return { roles: [BOT_ROLE] };
      if (method === 'GET' && route === Routes.guildMember(GUILD, MEMBER)) return { roles: [] };
      if (method === 'POST' || method === 'PATCH') return { id: '900000000000000001', channel_id: CHANNEL };
      return undefined;
    };
  const rest = {
    get: record('GET'),
    post: record('POST'),
    patch: record('PATCH'),
    put: record('PUT'),
    delete: record('DELETE'),
  };
  return { rest: rest as never, calls };
}

const MESSAGES = /^\/channels\/\d+\/messages$/;
const MESSAGE = /^\/channels\/\d+\/messages\/\d+$/;
const MEMBER_ROLE = /^\/guilds\/\d+\/members\/\d+\/roles\/\d+$/;

/**
 * What Discord checks for the requests made (docs: resources/message, resources/guild): posting
 * takes View Channel and Send Messages, a file Attach Files; editing or deleting the bot's own
 * message takes only seeing the channel (and Attach Files for a new file); a role mention that
 * pings (allowed_mentions.roles) takes Mention @everyone unless the role is mentionable; giving or
 * taking a member's role takes Manage Roles. Reads (GET) take nothing a feature asks for.
 */
function permissionsUsed(calls: readonly Call[]): Set<PermissionName> {
  const used = new Set<PermissionName>();
  for (const call of calls) {
    const withFiles = (call.files?.length ?? 0) > 0;
    if (call.method === 'POST' && MESSAGES.test(call.route)) {
      used.add('ViewChannel').add('SendMessages');
      if (withFiles) used.add('AttachFiles');
      const mentions = call.body?.allowed_mentions as { roles?: unknown[] } | undefined;
      if ((mentions?.roles?.length ?? 0) > 0) used.add('MentionEveryone');
    } else if ((call.method === 'PATCH' || call.method === 'DELETE') && MESSAGE.test(call.route)) {
      used.add('ViewChannel');
      if (withFiles) used.add('AttachFiles');
    } else if ((call.method === 'PUT' || call.method === 'DELETE') && MEMBER_ROLE.test(call.route)) {
      used.add('ManageRoles');
    } else if (call.method !== 'GET') {
      throw new Error(`a request this test has no rule for: ${call.method} ${call.route}`);
    }
  }
  return used;
}

function settingsWith(change: Partial<GuildSettings>): GuildSettings {
  return { ...defaults(GUILD, NOW), ...change };
}

const lease = { by: 'test', nonce: 'nonce-1', expiresAt: NOW + 60_000 };

/** The table's list for `feature`, as a set (the order is for the admin, not for this comparison). */
const listed = (...features: Feature[]) =>
  new Set(features.flatMap((f) => FEATURE_PERMISSIONS[f].permissions));

describe('each feature needs what it uses, no more', () => {
  it('digests: the digest is posted with its chart, a file: Attach Files', async () => {
    const { rest, calls } = recordingRest();
    const settings = settingsWith({ digest: { channelId: CHANNEL, period: 'week' } });
    const sender = new DigestSender({
      rest,
      settings: { get: async () => settings, update: async () => settings } as never,
      history: {
        members: async () => [{ userId: MEMBER, ups: 3, firstAt: NOW - 86_400_000 }],
        timed: async () => [{ userId: MEMBER, at: NOW - 86_400_000, possibleAt: null }],
        perDay: async () => [{ userId: MEMBER, day: NOW - 86_400_000, ups: 3 }],
      } as never,
      digests: { schedule: async () => undefined } as never,
      charts: { render: async () => Buffer.from('png') },
      guild: () => undefined,
      logger: silent,
      now: () => NOW,
    });
    const digest = {
      id: 'd1',
      guildId: GUILD,
      channelId: CHANNEL,
      period: 'week' as const,
      start: NOW - 7 * 86_400_000,
      end: NOW,
      timeZone: 'UTC',
      dueAt: NOW,
      traceParent: null,
    };
    expect(await sender.send(digest, { ...lease, id: 'd1' })).toEqual({ kind: 'sent' });
    expect(calls.some((c) => c.method === 'POST' && (c.files?.length ?? 0) > 0)).toBe(true);
    expect(permissionsUsed(calls)).toEqual(listed('digests'));
  });

  it('live leaderboard: posted once, then edited, with no file', async () => {
    const { rest, calls } = recordingRest();
    const settings = settingsWith({ liveChannelId: CHANNEL });
    const sender = new LiveBoardSender({
      rest,
      settings: { get: async () => settings },
      history: { members: async () => [{ userId: MEMBER, ups: 2, firstAt: NOW - 1_000 }] },
      boards: { shown: async () => undefined } as never,
      guild: () => undefined,
      now: () => NOW,
    });
    const board = {
      guildId: GUILD,
      channelId: CHANNEL,
      messageId: null,
      contentHash: null,
      dueAt: NOW,
      changedAt: NOW,
      editedAt: null,
      traceParent: null,
    };
    const claim = { ...lease, guildId: GUILD, changedAt: NOW };
    await sender.refresh(board, claim);
    await sender.refresh({ ...board, messageId: '900000000000000001', contentHash: 'older' }, claim);
    expect(calls.map((c) => c.method).filter((m) => m !== 'GET')).toEqual(['POST', 'PATCH']);
    expect(permissionsUsed(calls)).toEqual(listed('liveLeaderboard'));
  });

  it('reminders: posted in the reminder channel and edited by the up that follows; a role pinged takes reminderPing', async () => {
    const run = async (roleId: string | null) => {
      const { rest, calls } = recordingRest();
      const settings = settingsWith({ reminderChannelId: CHANNEL, reminderRoleId: roleId });
      const sender = new DiscordReminderSender({
        rest,
        settings: { get: async () => settings, update: async () => settings } as never,
        commands: { id: () => undefined } as never,
        guild: () => undefined,
        roleDeleted: () => false,
        logger: silent,
        now: () => NOW,
      });
      const key = { kind: 'guild' as const, guildId: GUILD };
      const outcome = await sender.send({ key, dueAt: NOW } as never, { ...lease, key, dueAt: NOW });
      expect(outcome).toMatchObject({ kind: 'sent' });
      await sender.followUp({
        messageId: '900000000000000001',
        guildId: GUILD,
        channelId: CHANNEL,
        text: 'Time to /up',
        postedAt: NOW,
        uppedBy: MEMBER,
        uppedAt: NOW + 60_000,
        traceParent: null,
      });
      expect(calls.map((c) => c.method).filter((m) => m !== 'GET')).toEqual(['POST', 'PATCH']);
      return permissionsUsed(calls);
    };
    expect(await run(null)).toEqual(listed('reminders'));
    expect(await run(ROLE)).toEqual(listed('reminders', 'reminderPing'));
  });

  it('"Notify me": gives the reminder role: reminderRole is Manage Roles, server-wide', async () => {
    const { rest, calls } = recordingRest();
    const settings = settingsWith({ reminderChannelId: CHANNEL, reminderRoleId: ROLE });
    const answers: unknown[] = [];
    const outcome = await notifyMe.execute({
      interaction: { guildId: GUILD, customId: encodeNotify(GUILD), user: { id: MEMBER } },
      deps: {
        settings: { get: async () => settings, update: async () => settings },
        roles: discordRoles(rest),
        now: () => NOW,
      },
      t: en,
      reply: { private: async (message: unknown) => void answers.push(message) },
    } as never);
    expect(outcome).toBe('added');
    expect(permissionsUsed(calls)).toEqual(listed('reminderRole'));
    expect(FEATURE_PERMISSIONS.reminderRole.scope).toBe('server');
  });

  it('reward roles: given and taken back: Manage Roles, server-wide', async () => {
    const { rest, calls } = recordingRest();
    const granter = discordRewardGranter({ roles: discordRoles(rest), botUserId: () => BOT });
    const grant = {
      id: 'g1',
      guildId: GUILD,
      userId: MEMBER,
      roleId: ROLE,
      periodKey: '2023-11',
      period: 'month' as const,
      createdAt: NOW,
      state: 'pending',
      failure: null,
      traceParent: null,
    };
    expect(await granter.act({ ...grant, action: 'add' } as never)).toEqual({ kind: 'sent' });
    expect(await granter.act({ ...grant, action: 'remove' } as never)).toEqual({ kind: 'sent' });
    expect(calls.filter((c) => c.method !== 'GET').map((c) => c.method)).toEqual(['PUT', 'DELETE']);
    expect(permissionsUsed(calls)).toEqual(listed('rewards'));
    expect(FEATURE_PERMISSIONS.rewards.scope).toBe('server');
  });

  it("the directory's events: announced, and a review's announcement edited", async () => {
    const { rest, calls } = recordingRest();
    let kept: { channelId: string; messageId: string; postedAt: number } | undefined;
    const deps = {
      rest,
      comments: {
        get: async () => kept,
        put: async (_g: string, _u: string, post: typeof kept) => {
          kept = post;
        },
      } as never,
      now: () => NOW,
    };
    const review = { guildId: GUILD, userId: MEMBER };
    await announceReview(deps, { ...review, change: 'new' }, CHANNEL, [], 'nonce-1');
    await announceReview(deps, { ...review, change: 'edit' }, CHANNEL, [], null);
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH']);
    expect(permissionsUsed(calls)).toEqual(listed('webhookAnnouncements'));
  });

  it('every feature in the table is one a test above ran, or posts as the reminders do', () => {
    // The join message is one post where the bot may post, as a reminder is.
    expect(FEATURE_PERMISSIONS.joinMessage.permissions).toEqual(FEATURE_PERMISSIONS.reminders.permissions);
    expect(FEATURES).toEqual([
      'reminders',
      'reminderPing',
      'reminderRole',
      'digests',
      'liveLeaderboard',
      'rewards',
      'webhookAnnouncements',
      'joinMessage',
    ]);
  });
});

describe('the invite link', () => {
  it('asks for every permission of every feature but the optional ones, and nothing else', () => {
    const needs: Record<string, { permissions: readonly string[]; optional?: true }> = FEATURE_PERMISSIONS;
    const each = FEATURES.filter((f) => !needs[f]?.optional).map(
      (f) => new PermissionsBitField(FEATURE_PERMISSIONS[f].permissions).bitfield,
    );
    expect(invitePermissions()).toBe(each.reduce((a, b) => a | b, 0n));
    expect(new PermissionsBitField(invitePermissions()).toArray().sort()).toEqual(
      ['AttachFiles', 'ManageRoles', 'SendMessages', 'ViewChannel'].sort(),
    );
    // Mention @everyone only for a role nobody may mention: /settings says so, the invite asks not.
    expect(FEATURES.filter((f) => needs[f]?.optional)).toEqual(['reminderPing']);
  });

  it('parses with the bot and commands scopes and the computed permissions', () => {
    const url = new URL(inviteUrl('1234567890123456789'));
    expect(`${url.origin}${url.pathname}`).toBe('https://discord.com/oauth2/authorize');
    expect(url.searchParams.get('client_id')).toBe('1234567890123456789');
    expect(url.searchParams.get('scope')?.split(' ')).toEqual(['bot', 'applications.commands']);
    expect(url.searchParams.get('permissions')).toBe(invitePermissions().toString());
    expect(url.search).toContain('scope=bot+applications.commands');
  });

  it('is the one docs/admin-guide.md gives, with the bits it names adding up to it', () => {
    const guide = readFileSync(new URL('../../docs/admin-guide.md', import.meta.url), 'utf8');
    const start = guide.indexOf('## Inviting the bot\n');
    const section = guide.slice(start, guide.indexOf('\n## ', start + 1));
    const stated = [...section.matchAll(/permissions=(\d+)/g)].map((m) => m[1]);
    expect(stated.length).toBeGreaterThan(0);
    for (const value of stated) expect(value).toBe(invitePermissions().toString());
    const bits = [...section.matchAll(/\((\d+)\)/g)].map((m) => BigInt(m[1] as string));
    expect(bits.reduce((a, b) => a | b, 0n)).toBe(invitePermissions());
    expect(section).toContain('npm run deploy-commands');
  });
});

describe('what is missing, in words', () => {
  const view = PermissionFlagsBits.ViewChannel;
  const send = PermissionFlagsBits.SendMessages;

  it('missingFor keeps the list’s order; Administrator lacks nothing', () => {
    expect(missingFor('digests', 0n)).toEqual(['ViewChannel', 'SendMessages', 'AttachFiles']);
    expect(missingFor('digests', new PermissionsBitField(view | send))).toEqual(['AttachFiles']);
    expect(missingFor('rewards', PermissionFlagsBits.Administrator)).toEqual([]);
    expect(channelProblems(['reminders', 'digests', 'liveLeaderboard'], view | send)).toEqual([
      { feature: 'digests', missing: ['AttachFiles'] },
    ]);
  });

  it('every permission and feature has its words in both languages', () => {
    for (const locale of ['en-US', 'ru'] as const) {
      const keys = new Set(catalogKeys(locale));
      for (const feature of FEATURES) {
        expect(keys.has(`permissions.feature.${feature}`), `${locale} ${feature}`).toBe(true);
        for (const name of FEATURE_PERMISSIONS[feature].permissions)
          expect(keys.has(`settings.permission.${name}`), `${locale} ${name}`).toBe(true);
      }
    }
  });

  it('/settings show: each feature turned on, what it lacks where, read at most once per place', async () => {
    const asked: string[] = [];
    const deps = {
      permissions: {
        inChannel: async (query: { channelId: string }) => {
          asked.push(query.channelId);
          return query.channelId === CHANNEL ? view | send : view;
        },
        // Not known in time: not told as missing.
        inGuild: async () => null,
      },
    };
    const problems = await permissionProblems(deps, { guildId: GUILD, botId: BOT }, [
      { feature: 'reminders', channelId: CHANNEL },
      { feature: 'reminderRole', channelId: null },
      { feature: 'digests', channelId: CHANNEL },
      { feature: 'liveLeaderboard', channelId: OTHER_CHANNEL },
    ]);
    expect(asked.sort()).toEqual([CHANNEL, OTHER_CHANNEL].sort());
    expect(problems).toEqual([
      { feature: 'digests', channelId: CHANNEL, missing: ['AttachFiles'] },
      { feature: 'liveLeaderboard', channelId: OTHER_CHANNEL, missing: ['SendMessages'] },
    ]);

    const overview = (t: typeof en) =>
      viewOf(
        renderOverview(
          {
            settings: settingsWith({
              digest: { channelId: CHANNEL, period: 'week' },
              liveChannelId: OTHER_CHANNEL,
            }),
            reminder: undefined,
            guildLocale: 'en-US',
            permissions: [...problems, { feature: 'rewards', channelId: null, missing: ['ManageRoles'] }],
          },
          t,
          { title: 'Settings', color: 0 },
        ),
      ).texts.join('\n');
    const english = overview(en);
    expect(english).toContain(`Digest in <#${CHANNEL}>: grant the bot **Attach Files** there`);
    expect(english).toContain(
      `Live leaderboard in <#${OTHER_CHANNEL}>: grant the bot **Send Messages** there`,
    );
    expect(english).toContain('Reward roles: grant the bot **Manage Roles** (Server Settings › Roles');
    const russian = overview(ru);
    expect(russian).toContain(`Сводка в <#${CHANNEL}>: выдайте боту там **Прикреплять файлы**`);
    expect(russian).toContain('Роли-награды: выдайте боту **Управлять ролями**');
  });

  it('reads the server’s permissions from its roles alone, with the lookup the handlers use', async () => {
    const { rest } = recordingRest();
    const lookup = channelPermissionsLookup(rest);
    const bits = await lookup.inGuild({ guildId: GUILD, userId: BOT }, 1_000);
    expect(bits).not.toBeNull();
    expect(missingFor('rewards', bits as bigint)).toEqual([]);
    expect(missingFor('digests', bits as bigint)).toEqual(['ViewChannel', 'SendMessages', 'AttachFiles']);
  });
});

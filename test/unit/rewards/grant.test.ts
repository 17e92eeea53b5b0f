/**
 * The reward roles' Discord side (discord/roles.ts, features/rewards/grant.ts) against a fake REST client: whether
 * the bot may give a role (Manage Roles, its role above the reward's, not managed, not
 * @everyone), and a grant or removal sorted into what the outbox records: given, refused for good
 * with the reason an admin can act on, or tried again.
 */
import { DiscordAPIError, HTTPError, PermissionFlagsBits, type REST } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { checkRoleManageable, discordRoles } from '../../../src/discord/roles.js';
import { auditReason, discordRewardGranter } from '../../../src/features/rewards/grant.js';
import type { RewardGrant } from '../../../src/store/rewards.js';

const GUILD = '722424773233213460';
const BOT = '722424773233213499';
const BOT_ROLE = '722424773233213470';
const REWARD = '722424773233213480';
const MEMBER = '525366699969478676';
const MANAGE = String(PermissionFlagsBits.ManageRoles);

function apiError(status: number, code: number, method = 'PUT'): DiscordAPIError {
  return new DiscordAPIError({ code, message: `error ${code}` }, code, status, method, '/x', {});
}

interface Requested {
  method: 'GET' | 'PUT' | 'DELETE';
  route: string;
  reason?: string | undefined;
}

/** A REST client whose routes answer what a test gives (a value, or an error to throw). */
function fakeRest(routes: Record<string, unknown>) {
  const requests: Requested[] = [];
  const answer = async (method: Requested['method'], route: string, options?: { reason?: string }) => {
    requests.push({ method, route, ...(options?.reason ? { reason: options.reason } : {}) });
    const key = `${method} ${route}`;
    if (!(key in routes)) throw apiError(404, 0, method);
    const value = routes[key];
    if (value instanceof Error) throw value;
    return value;
  };
  const rest = {
    get: (route: string) => answer('GET', route),
    put: (route: string, options?: { reason?: string }) => answer('PUT', route, options),
    delete: (route: string, options?: { reason?: string }) => answer('DELETE', route, options),
  } as unknown as REST;
  return { rest, requests };
}

/** The guild: @everyone, the bot's role and the reward's, and the bot holding its role. */
function guild(options: {
  botPosition?: number;
  botPermissions?: string;
  rewardPosition?: number;
  managed?: boolean;
  roles?: unknown[];
}) {
  return {
    [`GET /guilds/${GUILD}/roles`]: options.roles ?? [
      { id: GUILD, position: 0, permissions: '0', managed: false },
      {
        id: BOT_ROLE,
        position: options.botPosition ?? 5,
        permissions: options.botPermissions ?? MANAGE,
        managed: true,
      },
      {
        id: REWARD,
        position: options.rewardPosition ?? 2,
        permissions: '0',
        managed: options.managed ?? false,
      },
    ],
    [`GET /guilds/${GUILD}/members/${BOT}`]: { roles: [BOT_ROLE], user: { id: BOT } },
  };
}

const memberRole = `/guilds/${GUILD}/members/${MEMBER}/roles/${REWARD}`;
const grant = (action: 'add' | 'remove'): RewardGrant => ({
  id: `${GUILD}:${REWARD}:${MEMBER}:week:2026-11-23:${action}`,
  guildId: GUILD,
  roleId: REWARD,
  userId: MEMBER,
  periodKey: 'week:2026-11-23',
  action,
  dueAt: 0,
  createdAt: 0,
  period: 'week',
  state: 'pending',
  failure: null,
  traceParent: null,
});

describe('checkRoleManageable', () => {
  const check = (routes: Record<string, unknown>, roleId = REWARD) =>
    checkRoleManageable(fakeRest(routes).rest, GUILD, BOT, roleId);

  it('allows a role below the bot’s, with Manage Roles or Administrator', async () => {
    expect(await check(guild({}))).toEqual({ ok: true });
    expect(await check(guild({ botPermissions: String(PermissionFlagsBits.Administrator) }))).toEqual({
      ok: true,
    });
  });

  it('names what stops it: the permission, the hierarchy, a managed role, @everyone, a role gone', async () => {
    expect(await check(guild({ botPermissions: '0' }))).toEqual({
      ok: false,
      reason: 'missing-manage-roles',
    });
    expect(await check(guild({ rewardPosition: 7 }))).toEqual({ ok: false, reason: 'role-above-bot' });
    // Equal positions: the older role (the lower id, the bot's here) is above.
    expect(await check(guild({ rewardPosition: 5 }))).toEqual({ ok: true });
    const older = '722424773233213465';
    const tied = guild({
      roles: [
        { id: GUILD, position: 0, permissions: '0', managed: false },
        { id: BOT_ROLE, position: 5, permissions: MANAGE, managed: true },
        { id: older, position: 5, permissions: '0', managed: false },
      ],
    });
    expect(await check(tied, older)).toEqual({ ok: false, reason: 'role-above-bot' });
    expect(await check(guild({ managed: true }))).toEqual({ ok: false, reason: 'managed-role' });
    expect(await check(guild({}), GUILD)).toEqual({ ok: false, reason: 'everyone' });
    expect(await check(guild({}), '722424773233213481')).toEqual({ ok: false, reason: 'unknown-role' });
  });
});

describe('discordRewardGranter', () => {
  const act = async (
    action: 'add' | 'remove',
    routes: Record<string, unknown>,
    botUserId: string | null = BOT,
  ) => {
    const { rest, requests } = fakeRest(routes);
    const outcome = await discordRewardGranter({ roles: discordRoles(rest), botUserId: () => botUserId }).act(
      grant(action),
    );
    return { outcome, requests, changes: requests.filter((r) => r.method !== 'GET') };
  };

  it('gives the role once checked, and takes it back, saying why in the audit log', async () => {
    const given = await act('add', { ...guild({}), [`PUT ${memberRole}`]: undefined });
    expect(given.outcome).toEqual({ kind: 'sent' });
    expect(given.changes).toEqual([
      { method: 'PUT', route: memberRole, reason: 'Up reward: reached the count of ups in week:2026-11-23' },
    ]);
    const taken = await act('remove', { [`DELETE ${memberRole}`]: undefined });
    expect(taken.outcome).toEqual({ kind: 'sent' });
    expect(taken.requests).toEqual([
      { method: 'DELETE', route: memberRole, reason: 'Up reward: week:2026-11-23 ended' },
    ]);
  });

  it('does not try a role it cannot give, and records why', async () => {
    const above = await act('add', { ...guild({ rewardPosition: 9 }), [`PUT ${memberRole}`]: undefined });
    expect(above.outcome).toEqual({ kind: 'failed', reason: 'role-above-bot' });
    expect(above.changes).toEqual([]);
    const deleted = await act('add', guild({ roles: [{ id: GUILD, position: 0, permissions: MANAGE }] }));
    expect(deleted.outcome).toEqual({ kind: 'failed', reason: 'role-deleted' });
    expect(deleted.changes).toEqual([]);
  });

  it('sorts Discord’s refusals: a member gone, a role deleted, a permission lost meanwhile', async () => {
    const left = await act('add', { ...guild({}), [`PUT ${memberRole}`]: apiError(404, 10007) });
    expect(left.outcome).toEqual({ kind: 'failed', reason: 'member-left' });
    const deleted = await act('remove', { [`DELETE ${memberRole}`]: apiError(404, 10011, 'DELETE') });
    expect(deleted.outcome).toEqual({ kind: 'failed', reason: 'role-deleted' });
    // A removal refused (50013): the check names what the admins are to fix.
    const refused = await act('remove', {
      ...guild({ botPermissions: '0' }),
      [`DELETE ${memberRole}`]: apiError(403, 50013, 'DELETE'),
    });
    expect(refused.outcome).toEqual({ kind: 'failed', reason: 'missing-manage-roles' });
    const other = await act('add', { ...guild({}), [`PUT ${memberRole}`]: apiError(400, 50035) });
    expect(other.outcome).toEqual({ kind: 'failed', reason: 'rejected:50035' });
  });

  it('tries again after a 5xx, a lost connection, or before the bot is logged in', async () => {
    const busy = await act('add', {
      ...guild({}),
      [`PUT ${memberRole}`]: new HTTPError(503, 'Unavailable', 'PUT', '/x', {}),
    });
    expect(busy.outcome).toMatchObject({ kind: 'retry' });
    const lost = await act('remove', { [`DELETE ${memberRole}`]: new TypeError('fetch failed') });
    expect(lost.outcome).toMatchObject({ kind: 'retry' });
    const checkDown = await act('add', {
      ...guild({}),
      [`GET /guilds/${GUILD}/roles`]: apiError(500, 0, 'GET'),
      [`PUT ${memberRole}`]: undefined,
    });
    expect(checkDown.outcome).toMatchObject({ kind: 'retry' });
    expect(checkDown.changes).toEqual([]);
    const early = await act('add', { ...guild({}), [`PUT ${memberRole}`]: undefined }, null);
    expect(early.outcome).toMatchObject({ kind: 'retry' });
    expect(early.requests).toEqual([]);
  });

  it('names the top role’s month in the audit log', () => {
    expect(auditReason({ action: 'add', periodKey: 'month:2026-11', period: 'top' })).toBe(
      'Up reward: the top member of month:2026-11',
    );
  });
});

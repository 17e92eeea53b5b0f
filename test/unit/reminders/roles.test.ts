import { EventEmitter } from 'node:events';
import { type Client, GatewayDispatchEvents } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { ReminderRoles } from '../../../src/features/reminders/roles.js';
import { createLogger } from '../../../src/log/logger.js';
import type { GuildSettings, SettingsChange } from '../../../src/store/settings.js';
import { eventually } from '../../support/wait.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213470';
const ROLE = '722424773233213480';
const NEW_ROLE = '722424773233213481';

/** Settings as the store holds them, and the problems recorded. */
function fakeSettings(rows: Record<string, { channel: string; role: string | null }>) {
  const problems: Array<[string, unknown]> = [];
  let reads = 0;
  const settings = {
    reminderRoles: async () =>
      Object.entries(rows)
        .filter(([, row]) => row.role !== null)
        .map(([guildId, row]) => ({ guildId, roleId: row.role as string })),
    get: async (guildId: string) => {
      reads++;
      const row = rows[guildId];
      return row
        ? ({ guildId, reminderChannelId: row.channel, reminderRoleId: row.role } as GuildSettings)
        : undefined;
    },
    update: async (guildId: string, change: SettingsChange) => {
      problems.push([guildId, change.problem]);
      return {} as GuildSettings;
    },
  };
  return { settings, problems, reads: () => reads, rows };
}

function watched(rows: Record<string, { channel: string; role: string | null }>) {
  const store = fakeSettings(rows);
  const ws = new EventEmitter();
  const roles = new ReminderRoles({ settings: store.settings, logger: createLogger({ level: 'silent' }) });
  roles.watch({ ws } as unknown as Client);
  const guildCreate = (guildId: string, roleIds: string[]) =>
    ws.emit(GatewayDispatchEvents.GuildCreate, { id: guildId, roles: roleIds.map((id) => ({ id })) });
  const roleDelete = (guildId: string, roleId: string) =>
    ws.emit(GatewayDispatchEvents.GuildRoleDelete, { guild_id: guildId, role_id: roleId });
  return { roles, store, guildCreate, roleDelete };
}

describe('the reminder role watch', () => {
  it('a role chosen after start and deleted while the bot was offline is noticed at the next GUILD_CREATE', async () => {
    const w = watched({ [GUILD]: { channel: '1', role: ROLE } });
    // /settings chooses another role after start; the store now says NEW_ROLE.
    w.store.rows[GUILD] = { channel: '1', role: NEW_ROLE };
    w.roles.chosen(GUILD, NEW_ROLE);
    // Reconnected: the server's roles no longer hold NEW_ROLE (deleted while offline).
    w.guildCreate(GUILD, [GUILD, ROLE]);
    await eventually(() => (w.roles.isDeleted(GUILD, NEW_ROLE) ? true : undefined), 1_000, 'noticed');
    expect(w.store.problems).toEqual([[GUILD, 'role-deleted']]);
    // The old role is not the reminders' any more: still there, nothing said of it.
    expect(w.roles.isDeleted(GUILD, ROLE)).toBe(false);
  });

  it('choosing again clears a deletion; reminders turned off stop the watch for that server', async () => {
    const w = watched({ [GUILD]: { channel: '1', role: ROLE } });
    w.guildCreate(GUILD, [GUILD]);
    await eventually(() => (w.roles.isDeleted(GUILD, ROLE) ? true : undefined), 1_000, 'noticed');
    w.roles.chosen(GUILD, NEW_ROLE);
    expect(w.roles.isDeleted(GUILD, ROLE)).toBe(false);
    w.roles.chosen(GUILD, null);
    w.guildCreate(GUILD, [GUILD]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(w.store.problems).toEqual([[GUILD, 'role-deleted']]);
  });

  it("a live deletion of another role, or of another server's, is neither recorded nor kept", async () => {
    const w = watched({ [GUILD]: { channel: '1', role: ROLE } });
    await new Promise((resolve) => setTimeout(resolve, 0));
    w.roleDelete(GUILD, NEW_ROLE);
    w.roleDelete(OTHER, ROLE);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(w.roles.isDeleted(GUILD, NEW_ROLE)).toBe(false);
    expect(w.roles.isDeleted(OTHER, ROLE)).toBe(false);
    expect(w.store.problems).toEqual([]);
    // The reminders' own role, deleted live: recorded without a read of the store.
    const reads = w.store.reads();
    w.roleDelete(GUILD, ROLE);
    await eventually(() => (w.roles.isDeleted(GUILD, ROLE) ? true : undefined), 1_000, 'noticed');
    expect(w.store.problems).toEqual([[GUILD, 'role-deleted']]);
    expect(w.store.reads()).toBe(reads);
  });
});

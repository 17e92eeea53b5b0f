/**
 * Noticing that a server deleted the role its reminders mention. The bot caches no roles
 * (gateway/client.ts), and a REST call per reminder would cost a request per reminder, so the
 * gateway tells: GUILD_ROLE_DELETE while connected, and each GUILD_CREATE (at connect, and after a
 * server was unavailable) lists the roles that exist, checked for the servers whose reminders
 * mention a role (read from the store once at start, and kept as /settings changes them). A
 * deleted role is recorded as the server's problem, and its reminders are not posted until the
 * admins choose another role (a mention of a deleted role would ping no one).
 */
import { type Client, GatewayDispatchEvents } from 'discord.js';
import type { Logger } from '../../log/logger.js';
import type { SettingsRepository } from '../../store/settings.js';

interface RoleDelete {
  guild_id?: unknown;
  role_id?: unknown;
}
interface GuildCreate {
  id?: unknown;
  unavailable?: unknown;
  roles?: Array<{ id?: unknown }>;
}

export class ReminderRoles {
  readonly #settings: Pick<SettingsRepository, 'get' | 'update' | 'reminderRoles'>;
  readonly #logger: Logger;
  readonly #now: () => number;
  /** Guild → the role its reminders mention (only servers that have one). */
  readonly #configured = new Map<string, string>();
  readonly #deleted = new Set<string>();
  /** Servers /settings changed while the store's roles were being read at start. */
  readonly #chosen = new Set<string>();
  #loaded: Promise<void> | undefined;
  #loading = false;

  constructor(options: {
    settings: Pick<SettingsRepository, 'get' | 'update' | 'reminderRoles'>;
    logger: Logger;
    now?: () => number;
  }) {
    this.#settings = options.settings;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  /** Reads the servers with a reminder role, then follows the gateway. */
  watch(client: Client): void {
    this.#loading = true;
    this.#loaded = this.#settings.reminderRoles().then(
      (rows) => {
        // A server /settings changed while this was read keeps what it chose.
        for (const { guildId, roleId } of rows) {
          if (!this.#chosen.has(guildId)) this.#configured.set(guildId, roleId);
        }
        this.#chosen.clear();
        this.#loading = false;
      },
      (err: unknown) => {
        this.#chosen.clear();
        this.#loading = false;
        this.#logger.warn({ err }, 'could not read the reminder roles; deletions are noticed live only');
      },
    );
    client.ws.on(GatewayDispatchEvents.GuildRoleDelete, (data: RoleDelete) => {
      if (typeof data.guild_id === 'string' && typeof data.role_id === 'string') {
        void this.#roleGone(data.guild_id, data.role_id, true);
      }
    });
    client.ws.on(GatewayDispatchEvents.GuildCreate, (data: GuildCreate) => {
      if (typeof data.id !== 'string' || data.unavailable === true || !Array.isArray(data.roles)) return;
      const guildId = data.id;
      const roles = data.roles;
      void this.#loaded?.then(() => {
        const roleId = this.#configured.get(guildId);
        if (roleId && !roles.some((r) => r?.id === roleId)) void this.#roleGone(guildId, roleId, false);
      });
    });
  }

  /** /settings chose a role (or none): the one to watch for this server from now on. */
  chosen(guildId: string, roleId: string | null): void {
    for (const key of this.#deleted) if (key.startsWith(`${guildId}:`)) this.#deleted.delete(key);
    if (this.#loading) this.#chosen.add(guildId);
    if (roleId) this.#configured.set(guildId, roleId);
    else this.#configured.delete(guildId);
  }

  isDeleted(guildId: string, roleId: string): boolean {
    return this.#deleted.has(`${guildId}:${roleId}`);
  }

  async #roleGone(guildId: string, roleId: string, live: boolean): Promise<void> {
    try {
      // A live deletion may be of any role: only the one the reminders mention matters (and is
      // kept: every other server's deletions would make a set that only grows).
      if (live && this.#configured.get(guildId) !== roleId) {
        const settings = await this.#settings.get(guildId);
        if (!settings?.reminderChannelId || settings.reminderRoleId !== roleId) return;
      }
      this.#deleted.add(`${guildId}:${roleId}`);
      await this.#settings.update(guildId, { problem: 'role-deleted' }, this.#now());
      this.#logger.info({ guildId, roleId }, 'the role the reminders mention was deleted; recorded');
    } catch (err) {
      this.#logger.warn({ err, guildId }, 'could not record the deletion of the reminder role');
    }
  }
}

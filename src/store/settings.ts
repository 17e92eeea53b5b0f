/**
 * Per-server settings: where the next-up reminder goes, whom it mentions, its text, its heads-up
 * and repeats, the language of the bot's public messages, and the last problem met posting there
 * (for the settings command to show). A server with no row has the defaults.
 */
import type { Selectable } from 'kysely';
import type { DigestPeriod, GuildProblem, GuildSettingsTable, PublicLanguage } from './schema.js';
import type { Store } from './store.js';

export interface GuildSettings {
  guildId: string;
  reminderChannelId: string | null;
  reminderRoleId: string | null;
  reminderTemplate: string | null;
  publicLanguage: PublicLanguage;
  problem: { reason: GuildProblem; at: number } | null;
  updatedAt: number;
  /** The IANA time zone of the server's days (member streaks); null: UTC. */
  timeZone: string | null;
  /** The thank-you line a successful /up gets; null: none. */
  thanksTemplate: string | null;
  /** How long before the up is possible the reminder's heads-up is posted; null: none. */
  reminderEarlyMs: number | null;
  /** The reminder posted again every `everyMs` until someone ups, `times` times at most; null: never. */
  reminderRepeat: ReminderRepeat | null;
  /** Where and how often the period digest is posted; null: none. */
  digest: { channelId: string; period: DigestPeriod } | null;
  /** Where the live leaderboard is kept; null: none. */
  liveChannelId: string | null;
}

export interface ReminderRepeat {
  everyMs: number;
  times: number;
}

/** The settings a change sets: those left out (or undefined) keep their value, null clears one. */
export interface SettingsChange {
  reminderChannelId?: string | null;
  reminderRoleId?: string | null;
  reminderTemplate?: string | null;
  publicLanguage?: PublicLanguage;
  problem?: GuildProblem | null;
  timeZone?: string | null;
  thanksTemplate?: string | null;
  reminderEarlyMs?: number | null;
  reminderRepeat?: ReminderRepeat | null;
  digest?: { channelId: string; period: DigestPeriod } | null;
  liveChannelId?: string | null;
}

export const DEFAULT_PUBLIC_LANGUAGE: PublicLanguage = 'auto';

export class SettingsRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async get(guildId: string): Promise<GuildSettings | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('guild_settings').selectAll().where('guild_id', '=', guildId).executeTakeFirst(),
    );
    return row && fromRow(row);
  }

  /** Creates the server's row on its first change; returns the settings after the change. */
  async update(guildId: string, change: SettingsChange, now: number): Promise<GuildSettings> {
    const columns = {
      ...(change.reminderChannelId === undefined ? {} : { reminder_channel_id: change.reminderChannelId }),
      ...(change.reminderRoleId === undefined ? {} : { reminder_role_id: change.reminderRoleId }),
      ...(change.reminderTemplate === undefined ? {} : { reminder_template: change.reminderTemplate }),
      ...(change.publicLanguage === undefined ? {} : { public_language: change.publicLanguage }),
      ...(change.timeZone === undefined ? {} : { time_zone: change.timeZone }),
      ...(change.thanksTemplate === undefined ? {} : { thanks_template: change.thanksTemplate }),
      ...(change.reminderEarlyMs === undefined ? {} : { reminder_early_ms: change.reminderEarlyMs }),
      ...(change.reminderRepeat === undefined
        ? {}
        : {
            reminder_repeat_ms: change.reminderRepeat?.everyMs ?? null,
            reminder_repeat_times: change.reminderRepeat?.times ?? null,
          }),
      ...(change.digest === undefined
        ? {}
        : {
            digest_channel_id: change.digest?.channelId ?? null,
            digest_period: change.digest?.period ?? null,
          }),
      ...(change.liveChannelId === undefined ? {} : { live_channel_id: change.liveChannelId }),
      ...(change.problem === undefined
        ? {}
        : { problem: change.problem, problem_at: change.problem === null ? null : now }),
      updated_at: now,
    };
    const row = await this.#store.run((db) =>
      db
        .insertInto('guild_settings')
        .values({
          guild_id: guildId,
          reminder_channel_id: null,
          reminder_role_id: null,
          reminder_template: null,
          public_language: DEFAULT_PUBLIC_LANGUAGE,
          problem: null,
          problem_at: null,
          time_zone: null,
          thanks_template: null,
          reminder_early_ms: null,
          reminder_repeat_ms: null,
          reminder_repeat_times: null,
          ...columns,
        })
        .onConflict((oc) => oc.column('guild_id').doUpdateSet(columns))
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return fromRow(row);
  }

  /** Every server whose reminders mention a role, with the role: to notice the role's deletion. */
  async reminderRoles(): Promise<Array<{ guildId: string; roleId: string }>> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('guild_settings')
        .select(['guild_id', 'reminder_role_id'])
        .where('reminder_role_id', 'is not', null)
        .where('reminder_channel_id', 'is not', null)
        .execute(),
    );
    return rows.flatMap((r) =>
      r.reminder_role_id ? [{ guildId: r.guild_id, roleId: r.reminder_role_id }] : [],
    );
  }

  /** Everything the store keeps about a server (its up history and webhook too): for when the bot leaves it. */
  async deleteGuild(guildId: string): Promise<void> {
    await this.#store.transaction(async (trx) => {
      await trx.deleteFrom('guild_settings').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('reminders').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('personal_reminders').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('up_history').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('directory_webhooks').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('webhook_events').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('digests').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('live_boards').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('reward_roles').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('reward_grants').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('streak_notices').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('comment_posts').where('guild_id', '=', guildId).execute();
      await trx.deleteFrom('up_watches').where('guild_id', '=', guildId).execute();
    });
  }
}

function fromRow(row: Selectable<GuildSettingsTable>): GuildSettings {
  return {
    guildId: row.guild_id,
    reminderChannelId: row.reminder_channel_id,
    reminderRoleId: row.reminder_role_id,
    reminderTemplate: row.reminder_template,
    publicLanguage: row.public_language,
    problem: row.problem === null ? null : { reason: row.problem, at: row.problem_at ?? row.updated_at },
    updatedAt: row.updated_at,
    timeZone: row.time_zone ?? null,
    thanksTemplate: row.thanks_template ?? null,
    reminderEarlyMs: row.reminder_early_ms === null ? null : Number(row.reminder_early_ms),
    reminderRepeat:
      row.reminder_repeat_ms === null || row.reminder_repeat_times === null
        ? null
        : { everyMs: Number(row.reminder_repeat_ms), times: Number(row.reminder_repeat_times) },
    digest:
      row.digest_channel_id && row.digest_period
        ? { channelId: row.digest_channel_id, period: row.digest_period }
        : null,
    liveChannelId: row.live_channel_id ?? null,
  };
}

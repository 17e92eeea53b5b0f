/**
 * The store's tables as the queries see them (Kysely's `Database` interface). Times are epoch
 * milliseconds in `bigint` columns (read back as numbers on both engines); Discord ids are text.
 * The migrations in ./migrations create these tables; a test checks that both engines end up
 * with the same columns, nullability and indexes.
 */
import type { Generated } from 'kysely';
import type { PublicLanguage } from '../i18n/public-language.js';

export type { PublicLanguage };

/** An /up in flight (the journal of ups): see journal.ts. */
export interface PendingUpsTable {
  interaction_id: string;
  /** Which process's journal the entry belongs to (each shard process recovers its own). */
  owner: string;
  /** An interaction token: answers as the bot for 15 minutes. Deleted once answered or dead. */
  token: string;
  application_id: string;
  guild_id: string;
  channel_id: string;
  channel_name: string;
  user_id: string;
  locale: string;
  /** The server's locale when the up was asked (null: journaled before migration 006). */
  guild_locale: string | null;
  created_at: number;
}

/** Why the last reminder could not be posted, for the settings command to show. */
export type GuildProblem =
  | 'channel-deleted'
  | 'role-deleted'
  /** "Notify me" could not give the reminder role: Manage Roles, or the bot's role below it. */
  | 'cannot-give-role'
  | `missing-permission:${string}`;

export interface GuildSettingsTable {
  guild_id: string;
  /** Where the server's next-up reminder goes; no reminder while null. */
  reminder_channel_id: string | null;
  /** The role mentioned by the reminder. */
  reminder_role_id: string | null;
  /** The server's own reminder text; the default text while null. */
  reminder_template: string | null;
  /** The language of what the bot posts publicly in this server. */
  public_language: PublicLanguage;
  problem: GuildProblem | null;
  problem_at: number | null;
  updated_at: number;
  /** The IANA time zone whose days the server's member streaks count; UTC while null. */
  time_zone: string | null;
  /** The thank-you line added to a successful /up (features/up/thanks.ts); none while null. */
  thanks_template: string | null;
  /** How long before the up is possible a heads-up is posted; none while null. */
  reminder_early_ms: number | null;
  /** How often the reminder is posted again until someone ups; never while null. */
  reminder_repeat_ms: number | null;
  /** How many times at most it is posted again. */
  reminder_repeat_times: number | null;
  /** Where the period digest is posted (features/digests); none while null. */
  digest_channel_id: string | null;
  digest_period: DigestPeriod | null;
  /** Where the live leaderboard is kept (live_boards); none while null. */
  live_channel_id: string | null;
}

/** The calendar periods of digests and reward roles, in the server's time zone. */
export type DigestPeriod = 'week' | 'month';

export type ReminderState = 'scheduled' | 'claimed' | 'sent' | 'failed';

/** What both kinds of reminder share: when, and who is sending it. */
export interface ReminderColumns {
  due_at: number;
  state: ReminderState;
  /** The process that claimed it (state 'claimed'), until claim_expires_at. */
  claimed_by: string | null;
  claim_expires_at: number | null;
  /**
   * Sent as the message's `nonce` with `enforce_nonce`: kept when an expired claim is taken over,
   * so Discord drops the second copy if the first process did post it. At most 25 characters.
   */
  nonce: string | null;
  sent_at: number | null;
  failure: string | null;
  updated_at: number;
  /** The W3C traceparent of the work that scheduled it (an /up), for the send's span to link to. */
  trace_parent: string | null;
}

/** The server's next-up reminder: one per guild, the latest answer from the directory wins. */
export interface RemindersTable extends ReminderColumns {
  guild_id: string;
  /** The directory's next-up time the reminder was computed from. */
  next_up_at: number;
  /**
   * The time between an up and its next-up in the directory's last successful answer: what a
   * `new_server_bump` from the directory's webhook moves the reminder by. Null while not known.
   */
  cooldown_ms: number | null;
  /** Where and when the reminder was last posted, and its text (for its follow-up's edit). */
  post_channel_id: string | null;
  post_message_id: string | null;
  post_text: string | null;
  posted_at: number | null;
  /**
   * How many reminders were posted since the up became possible, in this cycle (this next_up_at):
   * 0 while the first is to come; k: the next is its k-th repeat. 0 by default (the database's).
   */
  step: Generated<number>;
  /** When this cycle's heads-up was posted; null: none yet. */
  heads_up_at: number | null;
}

/** A posted reminder to edit once the server is upped: who upped, when (followups.ts). */
export interface ReminderFollowupsTable extends OutboxColumns {
  message_id: string;
  guild_id: string;
  channel_id: string;
  /** The reminder's text as posted: the edit keeps it and adds who upped. */
  text: string;
  posted_at: number;
  upped_by: string;
  upped_at: number;
}

/** A member's own reminder for a server's next up. */
export interface PersonalRemindersTable extends ReminderColumns {
  guild_id: string;
  user_id: string;
}

/**
 * The directory's rate limits shared by several processes (rate-limit-ledger.ts): a request let
 * go. Times on the database's clock.
 */
export interface DirectoryGrantsTable {
  id: string;
  /** The limiter's buckets it counts in, comma-separated ('global', 'global,server'). */
  buckets: string;
  granted_at: number;
  /** When its answer came; null while in flight. */
  settled_at: number | null;
  /** Deleted after: it counts in no window any more. */
  kept_until: number;
}

/** A request waiting for the shared limits, in some process. */
export interface DirectoryWaitersTable {
  id: string;
  priority: 'interactive' | 'background';
  buckets: string;
  enqueued_at: number;
  /** Its process refreshes this at every turn; past it, the waiter is taken for dead. */
  expires_at: number;
}

/** A bucket the directory answered 429 for, held until `until_at`. */
export interface DirectoryHoldsTable {
  bucket: string;
  until_at: number;
}

/** A shard's numbers as the host running it last wrote them (several hosts). */
export interface ShardStatesTable {
  shard_id: number;
  /** HOST_ID of the host running it. */
  host: string;
  /** The random id of that host's process: two live processes of one HOST_ID are refused. */
  instance: string;
  /** SHARD_COUNT of that host: a host that disagrees is refused at start. */
  shard_count: number;
  /** 1 when ready, 0 otherwise. */
  ready: number;
  guilds: number;
  members: number;
  updated_at: number;
}

/** A lease (the statistics leader): who holds it, until when, and its fencing token. */
export interface LeasesTable {
  name: string;
  /** The HOST_ID of the holder. */
  holder: string;
  /** The random id of the holder's process: the lease is a process's, not a name's. */
  holder_instance: string;
  /** Grows by one each time the lease changes hands; what a holder's writes are checked against. */
  token: number;
  expires_at: number;
  /** When the work the lease guards was last done (a stats post: its tick's start). */
  last_done_at: number | null;
}

/** The next time a shard of this max_concurrency bucket may IDENTIFY (shard id % max_concurrency). */
export interface IdentifyTurnsTable {
  bucket: number;
  next_at: number;
}

/**
 * Where a recorded up came from: an /up through this bot, the directory's webhook (v2's, or v3's
 * HTTPS notifications: `webhook`), or its v3 WebSocket notifications (`notify`).
 */
export type UpSource = 'bot' | 'webhook' | 'notify';

/** One successful up (store/history.ts). */
export interface UpHistoryTable {
  /** `bot:<interaction id>`: the same up recorded twice is one row. */
  id: string;
  guild_id: string;
  user_id: string;
  at: number;
  /** The directory's up count after it, when its answer gave one. */
  up_count: number | null;
  source: UpSource;
  /** When the up became possible (the cooldown's end before it), when known: its reaction time. */
  possible_at: number | null;
}

/** A server's set-up of the directory's webhook (/settings webhook). */
export interface DirectoryWebhooksTable {
  guild_id: string;
  /** Where its events are announced. */
  channel_id: string;
  /** Random, per server (base64url). */
  key_salt: string;
  /** HMAC-SHA-256 of the key under the salt (base64url): the key itself is never stored. */
  key_hash: string;
  /** Why the last announcement could not be posted (as GuildProblem), for /settings show. */
  problem: GuildProblem | null;
  /** When the last event was received. */
  last_event_at: number | null;
  updated_at: number;
}

/** An outbox row's state (OutboxColumns): waiting, claimed for a lease, then done or failed. */
export type OutboxState = 'pending' | 'claimed' | 'done' | 'failed';
export type WebhookEventState = OutboxState;

/** One event the directory delivered: stored before it is answered, announced after (an outbox). */
export interface WebhookEventsTable extends OutboxColumns {
  /** `<guild id>:<what identifies the event>`: the same delivery twice is one row. */
  id: string;
  guild_id: string;
  type: string;
  /** The event as checked (JSON of features/webhooks/events.ts's DirectoryEvent). */
  payload: string;
  received_at: number;
}

/**
 * An outbox's row besides what it is about (webhook events, reminder follow-ups): waiting
 * (`pending`), claimed by a process for a lease, then done or failed (store/claims.ts).
 */
export interface OutboxColumns {
  state: OutboxState;
  claimed_by: string | null;
  claim_expires_at: number | null;
  /** Discord's `nonce` for what it posts; kept when an expired claim is taken over. */
  nonce: string | null;
  done_at: number | null;
  failure: string | null;
  /** The W3C traceparent of the work that stored it, for the span that does it to link to. */
  trace_parent: string | null;
}

/** A server's digest of one period: posted once at its end (an outbox row, features/digests). */
export interface DigestsTable extends OutboxColumns {
  /** `<guild id>:<period key>`: one digest per server and period. */
  id: string;
  guild_id: string;
  channel_id: string;
  period: DigestPeriod;
  period_start: number;
  period_end: number;
  /** The IANA zone whose calendar the period follows. */
  time_zone: string;
  /** The period's end, spread over a few minutes by server (10,000 servers share a boundary). */
  due_at: number;
}

/**
 * A server's live leaderboard: one message kept up to date, edited at most once a minute and only
 * when its content changed (an outbox row, pending again after each up).
 */
export interface LiveBoardsTable extends OutboxColumns {
  guild_id: string;
  channel_id: string;
  /** The message kept up to date; null until posted (or after it was deleted). */
  message_id: string | null;
  /** A hash of what it shows: an edit that would change nothing is not made. */
  content_hash: string | null;
  /** When it is next to be looked at. */
  due_at: number;
  /** When an up last changed what it shows, and the change the message shows. */
  changed_at: number | null;
  shown_at: number | null;
  edited_at: number | null;
}

/** A reward role: members reaching `ups` in the period get it; `top`: the month's top member. */
export interface RewardRolesTable {
  guild_id: string;
  role_id: string;
  /** Null for the top role. */
  ups: number | null;
  period: RewardPeriod;
  created_at: number;
}

export type RewardPeriod = 'week' | 'month' | 'all' | 'top';
export type RewardAction = 'add' | 'remove';

/** One grant or removal of a reward role: done once (an outbox row), and kept as the record. */
export interface RewardGrantsTable extends OutboxColumns {
  /** `<guild>:<role>:<user>:<period key>:<action>`: each happens once. */
  id: string;
  guild_id: string;
  role_id: string;
  user_id: string;
  /** The period it is for ('all' for ever; a month's or a week's key). */
  period_key: string;
  action: RewardAction;
  due_at: number;
  created_at: number;
}

/** A server's streak that a window's grace ended, to announce once (features/history/streak-watch.ts). */
export interface StreakNoticesTable extends OutboxColumns {
  /** `<guild id>:<the window's next-up time>`: one notice per window. */
  id: string;
  guild_id: string;
  /** Ups on time in a row, ended. */
  length: number;
  /** When the window's grace ran out. */
  ended_at: number;
}

/** A shard's Discord gateway session, to resume in the next process (gateway-sessions.ts). */
export interface GatewaySessionsTable {
  shard_id: number;
  /** The shard count it was opened with: a session is only resumed with the same count. */
  shard_count: number;
  session_id: string;
  /** The last sequence number received, matching the shard's guild rows. */
  sequence: number;
  resume_url: string;
  /** JSON text of what READY said of the bot ({user, application}). */
  identity: string;
  saved_at: number;
}

/** A guild as the shard holding it last saw it (gateway-sessions.ts). */
export interface GatewayGuildsTable {
  guild_id: string;
  shard_id: number;
  /** JSON text of the guild. */
  packet: string;
}

export interface Database {
  pending_ups: PendingUpsTable;
  guild_settings: GuildSettingsTable;
  reminders: RemindersTable;
  personal_reminders: PersonalRemindersTable;
  directory_grants: DirectoryGrantsTable;
  directory_waiters: DirectoryWaitersTable;
  directory_holds: DirectoryHoldsTable;
  shard_states: ShardStatesTable;
  leases: LeasesTable;
  identify_turns: IdentifyTurnsTable;
  up_history: UpHistoryTable;
  directory_webhooks: DirectoryWebhooksTable;
  webhook_events: WebhookEventsTable;
  reminder_followups: ReminderFollowupsTable;
  gateway_sessions: GatewaySessionsTable;
  gateway_guilds: GatewayGuildsTable;
  digests: DigestsTable;
  live_boards: LiveBoardsTable;
  reward_roles: RewardRolesTable;
  reward_grants: RewardGrantsTable;
  streak_notices: StreakNoticesTable;
  comment_posts: CommentPostsTable;
  up_watches: UpWatchesTable;
  welcomes: WelcomesTable;
}

/** The message posted on joining a server, once per server (store/welcomes.ts). */
export interface WelcomesTable {
  guild_id: string;
  claimed_at: number;
  /** Where it was posted; null while being posted, or when no channel would take it. */
  channel_id: string | null;
  message_id: string | null;
}

/** Where a review of a server was announced (v3: one review per member and resource). */
export interface CommentPostsTable {
  guild_id: string;
  user_id: string;
  channel_id: string;
  message_id: string;
  posted_at: number;
}

/** An /up answered on v3, waiting for the directory's notification of the up it asked for. */
export interface UpWatchesTable {
  interaction_id: string;
  guild_id: string;
  user_id: string;
  application_id: string;
  /** The interaction's token: it edits the answer for 15 minutes. Deleted once used or expired. */
  token: string;
  /** The presser's language (the answer is theirs). */
  locale: string;
  asked_at: number;
  expires_at: number;
}

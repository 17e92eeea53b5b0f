/**
 * Durable state: what the bot keeps across restarts (ups in flight, per-server settings,
 * reminders), in SQLite by default or PostgreSQL, with one schema and one query layer for both.
 */
export { StoreError, StoreUnavailableError } from './errors.js';
export {
  DEFAULT_WINDOW_MS,
  type Followup,
  type FollowupClaim,
  FollowupRepository,
} from './followups.js';
export {
  type GatewaySave,
  GatewaySessionRepository,
  type GatewaySnapshot,
  type StoredGatewaySession,
} from './gateway-sessions.js';
export { STILL_BROKEN_EVERY_MS, type StoreHealth, type StoreProblem } from './health.js';
export {
  HistoryRepository,
  type LatestUp,
  type MemberUps,
  SAME_UP_MS,
  UP_HISTORY_DAYS,
  UP_HISTORY_MS,
  type UpRecord,
} from './history.js';
export {
  type PendingUp,
  StoreUpJournal,
  type StoreUpJournalOptions,
  TOKEN_LIFETIME_MS,
  type UpJournal,
} from './journal.js';
export {
  type CommentPost,
  CommentPostRepository,
  type InboxEvent,
  NotificationInbox,
  type UpWatch,
  UpWatchRepository,
  WATCH_MS,
} from './notifications.js';
export { DEFAULT_LOCK_WAIT_MS, openStore, SQLITE_FILE_NAME, type StoreOptions } from './open.js';
export type { StoreQueryEvent, StoreQueryListener } from './query-timing.js';
export { PostgresRateLimitLedger } from './rate-limit-ledger.js';
export {
  type Claim,
  type GuildReminder,
  type Reminder,
  type ReminderCycle,
  type ReminderKey,
  ReminderRepository,
} from './reminders.js';
export { type HeldWrite, isFull } from './room.js';
export type { GuildProblem, PublicLanguage, ReminderState, UpSource } from './schema.js';
export {
  DEFAULT_PUBLIC_LANGUAGE,
  type GuildSettings,
  type ReminderRepeat,
  type SettingsChange,
  SettingsRepository,
} from './settings.js';
export { type Engine, Store, type StoreLogger } from './store.js';
export {
  type EnqueueOutcome,
  type EventClaim,
  type IntakeLimits,
  type KeyCheck,
  type StoredEvent,
  WEBHOOK_EVENT_DAYS,
  WEBHOOK_EVENT_MS,
  WebhookRepository,
  type WebhookSetup,
} from './webhooks.js';

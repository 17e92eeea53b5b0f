export type { ObjectSchema, Reply } from './body.js';
export { driftValue, type FaultKind, type FaultRule, Faults } from './faults.js';
export { formatWaitRu, upCooldownMessage, upSuccessMessage } from './messages.js';
export {
  DEFAULT_GLOBAL_LIMIT,
  DEFAULT_ROUTE_LIMIT,
  DEFAULT_V3_LIMIT,
  type RateLimitRule,
  type RateLimitSettings,
  type V3RateLimitRule,
} from './rate-limit.js';
export { type Kind, type NextUpStyle, ROUTES } from './routes.js';
export {
  DEFAULT_COOLDOWN_MS,
  type Emulator,
  type EmulatorOptions,
  type RecordedRequest,
  startEmulator,
  type V3Controls,
} from './server.js';
export {
  type BotData,
  type CommentData,
  createSeedState,
  type EmulatorState,
  IDS,
  LINK_DOMAINS,
  type LinkData,
  NOT_UPDATED_SEED_MESSAGE,
  PRIVATE_BOT_SERVERS,
  type ProfileData,
  SEED_COOLDOWN_AGE_MS,
  type SearchDocument,
  type ServerData,
  TOKENS,
  type TokenInfo,
  V3_KEY_OWNERS,
  V3_KEYS,
  type V3IndexName,
  type V3State,
  type V3StatsRecord,
} from './state.js';
export { type V3HookDelivery, V3HookSender, type V3HookTarget } from './v3/hooks.js';
export {
  CONNECT_LIMIT,
  type CommentNotifyType,
  DEFAULT_AUTH_TIMEOUT_MS,
  DEFAULT_PING_TIMEOUT_MS,
  type NotifyEvent,
  type NotifyFrame,
  NotifyGateway,
  type NotifySocketInfo,
  UP_LIFETIME_MS,
} from './v3/notifications.js';
export { V3_LIBRARIES } from './v3/resources.js';
export { V3_ERRORS, type V3ErrorName } from './v3/routes.js';
export { type CommentWebhook, type Delivery, WebhookSender, type WebhookTarget } from './webhooks.js';

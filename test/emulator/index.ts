export type { ObjectSchema, Reply } from './body.js';
export { driftValue, type FaultKind, type FaultRule, Faults } from './faults.js';
export { formatWaitRu, upCooldownMessage, upSuccessMessage } from './messages.js';
export {
  DEFAULT_GLOBAL_LIMIT,
  DEFAULT_ROUTE_LIMIT,
  type RateLimitRule,
  type RateLimitSettings,
} from './rate-limit.js';
export { type Kind, type NextUpStyle, ROUTES } from './routes.js';
export {
  DEFAULT_COOLDOWN_MS,
  type Emulator,
  type EmulatorOptions,
  type RecordedRequest,
  startEmulator,
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
  type ServerData,
  TOKENS,
  type TokenInfo,
} from './state.js';
export { type CommentWebhook, type Delivery, WebhookSender, type WebhookTarget } from './webhooks.js';

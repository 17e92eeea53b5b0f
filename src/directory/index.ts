/**
 * Public entry of the directory client: `import { DirectoryClient } from 'directory-bot/directory'`.
 * Everything is named: the client, its options and hooks, the records it returns, its errors and
 * the reference parser. The rate limiter, the endpoint table, the transport and the schemas stay
 * inside; the bot itself imports the client through here too.
 */
export {
  DEFAULT_BASE_URL,
  DEFAULT_RATE_LIMITS,
  DirectoryClient,
  type DirectoryClientOptions,
  type RequestEvent,
  type RequestOptions,
} from './client.js';
export type { EndpointName } from './endpoints.js';
export {
  BadRequestError,
  DirectoryError,
  type DirectoryErrorCode,
  type ErrorContext,
  ForbiddenError,
  InvalidArgumentError,
  InvalidResponseError,
  isDirectoryError,
  NotFoundError,
  RateLimitedError,
  TokenKindNotAcceptedError,
  UnauthorizedError,
  UnavailableError,
  type UnavailableReason,
} from './errors.js';
export {
  type CacheOutcome,
  type CacheStats,
  LOOKUP_CACHE_DEFAULTS,
  type LookupCacheOptions,
} from './lookup-cache.js';
export type { BucketLimit, GrantInfo, Priority } from './rate-limiter.js';
export { isShortCode, isSnowflake, parseReference, type RefKind } from './refs.js';
// The shared limits' storage contract, for whoever keeps the ledger (the bot: src/store).
export type {
  LedgerDecision,
  LedgerGrant,
  LedgerState,
  LedgerWaiter,
  RateLimitLedger,
} from './shared-rate-limiter.js';
export {
  type ApiVersion,
  type AttachedRef,
  type BotLinks,
  type BotReference,
  type BotStats,
  type BotStatsUpdate,
  type DirectoryBot,
  type DirectoryComment,
  type DirectoryProfile,
  type DirectoryReview,
  type DirectoryServer,
  type DirectoryUp,
  type LinkDomainCode,
  type OkResult,
  type OpenString,
  type ProfileComments,
  type RatingCount,
  type ResourceExtras,
  type SearchHit,
  type ServerLinks,
  type ServerReference,
  type ServerStatistics,
  type ServerUpdate,
  type ServerUpResult,
  type ShortLink,
  TOKEN_KINDS,
  type TokenInfo,
  type TokenKind,
  type ValidateBotResult,
  type Vote,
} from './types.js';
export { V3_ERROR_CODES } from './v3/codes.js';
export {
  NotificationsClient,
  type NotificationsClientOptions,
  type NotifyConnectionState,
} from './v3/notifications.js';
export {
  KNOWN_NOTIFY_TYPES,
  type KnownNotifyType,
  type NotifyEvent,
  type NotifyPayload,
  type NotifyWebhookResult,
  notifyEventKey,
  parseNotifyWebhook,
} from './v3/notify.js';
export { API_VERSIONS, DEFAULT_API_VERSION, PUBLISHED_LIMITS } from './versions.js';

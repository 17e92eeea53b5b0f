/** Public entry of the directory client: `import { DirectoryClient } from 'directory-bot/directory'`. */
export {
  DEFAULT_BASE_URL,
  DEFAULT_RATE_LIMITS,
  DirectoryClient,
  type DirectoryClientOptions,
  type RequestEvent,
  type RequestOptions,
} from './client.js';
export { ENDPOINTS, type Endpoint, type EndpointName, routeOf } from './endpoints.js';
export * from './errors.js';
export { EPOCH_THRESHOLD_MS, normalizeNextUp } from './next-up.js';
export { type BucketLimit, type GrantInfo, type Priority, RateLimiter } from './rate-limiter.js';
export {
  isShortCode,
  isSnowflake,
  parseReference,
  type RefKind,
  SHORT_CODE_PATTERN,
  SNOWFLAKE_PATTERN,
} from './refs.js';
export * from './types.js';

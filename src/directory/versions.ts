/**
 * The versions of the directory's interface and what each publishes of its limits. v3 is the one
 * the directory runs today (docs.boticord.top/api/, "API Versions": v3 Active, v1 and v2
 * Inactive); v1 and v2 are kept whole, as the interface this client was specified on.
 */

export type ApiVersion = 'v1' | 'v2' | 'v3';
export const API_VERSIONS: readonly ApiVersion[] = ['v3', 'v2', 'v1'];
export const DEFAULT_API_VERSION: ApiVersion = 'v3';

export interface PublishedLimits {
  /** Every request. */
  global: { max: number; windowMs: number };
  /** Each limited route (v1/v2: POST /server and POST /stats); v3 publishes none (it is never used there). */
  routes: { max: number; windowMs: number };
}

/**
 * v1/v2: 5 requests per 5 s, and 1 per 2 s on POST /server and POST /stats (directory-facts.md).
 * v3: "25 requests per 10 seconds" for every route (docs.boticord.top/api/, "Rate limits"; an
 * overrun blocks for 10 s, the Russian page says), per key: the key is what a request carries.
 */
export const PUBLISHED_LIMITS: Readonly<Record<ApiVersion, PublishedLimits>> = {
  v1: { global: { max: 5, windowMs: 5_000 }, routes: { max: 1, windowMs: 2_000 } },
  v2: { global: { max: 5, windowMs: 5_000 }, routes: { max: 1, windowMs: 2_000 } },
  v3: { global: { max: 25, windowMs: 10_000 }, routes: { max: 1, windowMs: 2_000 } },
};

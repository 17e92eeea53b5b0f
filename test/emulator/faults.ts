// Fault injection: rules checked in order before routing; the first rule that matches is used.

interface FaultMatch {
  /** HTTP method, compared case-insensitively; any method when absent. */
  method?: string;
  /**
   * Tested against the raw path after the version prefix (/v1, /v2 or /v3), without the query
   * (e.g. /bot/123; v3: /bots/123, /search/indexes/bots/search).
   */
  path?: RegExp;
  /** Only requests under this API version; any version when absent. */
  version?: 1 | 2 | 3;
  /** How many requests the rule applies to; default Infinity. */
  times?: number;
  /** Only requests whose body holds this text (one user's /up among the bot's other posts). */
  bodyIncludes?: string;
}

export type FaultRule = FaultMatch &
  (
    | { kind: 'latency' | 'stall'; ms: number }
    /** The request is carried out at once; its answer is held `ms` (never written if the client goes first). */
    | { kind: 'late-answer'; ms: number }
    | { kind: 'status'; status: number; message?: string }
    | { kind: 'html' | 'text'; status: number; body?: string }
    | { kind: 'invalid-json' | 'drift' | 'drop' }
    | { kind: 'rate-limit'; retryAfterMs?: number }
    | { kind: 'not-updated'; message?: string }
  );

export type FaultKind = FaultRule['kind'];

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
}

export class Faults {
  #rules: ActiveRule[] = [];

  add(rule: FaultRule): void {
    this.#rules.push({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.#rules = [];
  }

  /** Rules that can still fire, in order. */
  get rules(): readonly FaultRule[] {
    return this.#rules.filter((r) => r.remaining > 0).map((r) => r.rule);
  }

  /** The first rule matching the request; counts its `times` down. */
  take(method: string, path: string, body = '', version: 1 | 2 | 3 | null = null): FaultRule | undefined {
    for (const active of this.#rules) {
      if (active.remaining <= 0) continue;
      const { rule } = active;
      if (rule.method !== undefined && rule.method.toUpperCase() !== method.toUpperCase()) continue;
      if (rule.version !== undefined && rule.version !== version) continue;
      if (rule.path !== undefined) {
        rule.path.lastIndex = 0;
        if (!rule.path.test(path)) continue;
      }
      if (rule.bodyIncludes !== undefined && !body.includes(rule.bodyIncludes)) continue;
      active.remaining -= 1;
      return rule;
    }
    return undefined;
  }
}

/**
 * Rewrites a JSON value into a plausible but wrong shape: keys renamed (camelCase -> snake_case,
 * else capitalised), numbers wrapped in objects, booleans as strings, arrays wrapped in an object.
 */
export function driftValue(value: unknown): unknown {
  if (Array.isArray(value)) return { items: value.map(driftValue), total: value.length };
  if (typeof value === 'number') return { value };
  if (typeof value === 'boolean') return String(value);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[driftKey(key)] = driftValue(inner);
    return out;
  }
  return value;
}

function driftKey(key: string): string {
  const snake = key.replace(/[A-Z]+/g, (m) => `_${m.toLowerCase()}`);
  if (snake !== key) return snake;
  return key.charAt(0).toUpperCase() + key.slice(1);
}

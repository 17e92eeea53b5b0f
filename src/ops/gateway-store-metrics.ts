/**
 * The metrics of the gateway's sessions and of the store (created by createMetrics, metrics.ts,
 * in its registry): identifies and resumes per shard, the identify budget Discord gave, and how
 * long the store's statements take. Their events are defined here; the producers (the shards'
 * events, the sharding strategy, the store's query timing) satisfy them structurally.
 */
import type { APIGatewaySessionStartLimit } from 'discord-api-types/v10';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A shard's session began: a new one (READY after IDENTIFY) or the old one again (RESUMED). */
export type GatewaySessionKind = 'identified' | 'resumed';

/** `session_start_limit` of GET /gateway/bot, as @discordjs/ws fetched it before connecting. */
export type SessionStartLimit = Pick<APIGatewaySessionStartLimit, 'total' | 'remaining' | 'reset_after'>;

/** One statement of the store (src/store/query-timing.ts), by engine and kind. */
export interface StoreQueryEvent {
  engine: string;
  statement: string;
  durationMs: number;
  failed: boolean;
}

/** What the store says of its file (src/store/health.ts StoreHealth), read at scrape time. */
export interface StoreHealthSource {
  problem(): { problem: string } | undefined;
  waiting?(): number;
}

/** The problems a SQLite file can have (store/sqlite-errors.ts FileProblem): each has its series. */
const STORE_PROBLEMS = ['read-only', 'damaged', 'full', 'failing'] as const;

export interface GatewayStoreMetrics {
  gatewaySession(shardId: number, kind: GatewaySessionKind): void;
  sessionStartLimit(limit: SessionStartLimit): void;
  storeQuery(event: StoreQueryEvent): void;
  /** Where store_problem and store_writes_waiting are read; undefined: left out. */
  setStoreHealth(source: StoreHealthSource | undefined): void;
}

/** Statements: most take well under a millisecond on SQLite, a few on PostgreSQL; a lock wait is seconds. */
const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30];

export function gatewayStoreMetrics(registers: Registry[], now: () => number): GatewayStoreMetrics {
  const sessions = new Counter({
    name: 'discord_gateway_sessions_total',
    help: "Gateway sessions begun, by shard and kind: identified (a new session, spending Discord's identify budget) or resumed.",
    labelNames: ['shard', 'kind'] as const,
    registers,
  });
  const statements = new Histogram({
    name: 'store_query_duration_seconds',
    help: "The store's statements by engine (sqlite, postgres), kind (select, insert, update, delete, other) and outcome (ok, error).",
    labelNames: ['engine', 'statement', 'outcome'] as const,
    buckets: STATEMENT_BUCKETS,
    registers,
  });

  let storeHealth: StoreHealthSource | undefined;
  new Gauge({
    name: 'store_problem',
    help:
      "1 while the store's SQLite file has this problem (read-only, damaged, full, failing), else 0: " +
      'it changes with the state, as the one log line of each change does; /readyz is 503 while one is 1.',
    labelNames: ['problem'] as const,
    registers,
    collect() {
      this.reset();
      if (!storeHealth) return;
      const now = storeHealth.problem()?.problem;
      for (const problem of STORE_PROBLEMS) this.set({ problem }, problem === now ? 1 : 0);
    },
  });
  new Gauge({
    name: 'store_writes_waiting',
    help: "Writes refused for lack of room on the SQLite file's disk, held in memory until there is room (an up's history row, its reminder).",
    registers,
    collect() {
      this.reset();
      this.remove();
      if (storeHealth?.waiting) this.set(storeHealth.waiting());
    },
  });

  /** What Discord said at the last fetch, and the identifies this process made since. */
  let budget: { limit: SessionStartLimit; at: number; identifiesSince: number } | undefined;
  new Gauge({
    name: 'discord_identify_budget_remaining',
    help:
      "Identifies left in Discord's daily budget (session_start_limit.remaining at the last GET /gateway/bot, " +
      'less the identifies this process made since); left out before the first fetch and once the budget has reset.',
    registers,
    collect() {
      this.reset();
      this.remove();
      if (!budget || now() - budget.at >= budget.limit.reset_after) return;
      this.set(Math.max(0, budget.limit.remaining - budget.identifiesSince));
    },
  });
  new Gauge({
    name: 'discord_identify_budget_total',
    help: "Discord's daily identify budget for the bot (session_start_limit.total at the last GET /gateway/bot).",
    registers,
    collect() {
      this.reset();
      this.remove();
      if (budget) this.set(budget.limit.total);
    },
  });

  return {
    gatewaySession(shardId, kind) {
      sessions.inc({ shard: String(shardId), kind });
      if (kind === 'identified' && budget) budget.identifiesSince += 1;
    },
    sessionStartLimit(limit) {
      budget = { limit, at: now(), identifiesSince: 0 };
    },
    setStoreHealth(source) {
      storeHealth = source;
    },
    storeQuery(event) {
      const seconds = event.durationMs / 1000;
      if (!Number.isFinite(seconds) || seconds < 0) return;
      statements.observe(
        { engine: event.engine, statement: event.statement, outcome: event.failed ? 'error' : 'ok' },
        seconds,
      );
    },
  };
}

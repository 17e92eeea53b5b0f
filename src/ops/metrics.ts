/**
 * Prometheus metrics for the bot, in a registry of their own (never prom-client's global one),
 * so tests and several bots in one process do not collide. Each group of families (interactions,
 * the directory, reminders, webhooks and notifications, server reports, hosts; Discord's gauges
 * in discord-metrics.ts, the gateway's sessions and the store in gateway-store-metrics.ts) is
 * made by a function of its own, and createMetrics puts them together.
 *
 * The adapters are plain closures that never throw: hand them straight to the hooks, e.g.
 * `onRequest: metrics.directoryRequest`, `onRateLimitGrant: metrics.rateLimitGrant`,
 * `onHandled: metrics.interaction`, `onResult: metrics.serverReport`. The events they take
 * are defined here (or are the directory client's public hook types): the producers satisfy them
 * structurally, and metrics depends on none of them.
 * Guild and shard gauges are read at scrape time from the source given to `setDiscordSource`
 * (discord-metrics.ts).
 *
 * Label values stay bounded: routes are path templates (`POST /server`, not the guild's ID),
 * interaction names come from the command registry, outcomes and statuses from short lists.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CacheStats, GrantInfo, RequestEvent } from '../directory/index.js';
import { KNOWN_NOTIFY_TYPES } from '../directory/v3/notify.js';
import { errorLine } from '../log/error-line.js';
import type { Logger } from '../log/logger.js';
import {
  type DiscordRestConditions,
  type DiscordSource,
  discordGatewayMetrics,
  discordMetrics,
  discordRestMetrics,
} from './discord-metrics.js';
import { type GatewayStoreMetrics, gatewayStoreMetrics } from './gateway-store-metrics.js';

export type {
  DiscordRestConditions,
  DiscordShardState,
  DiscordSource,
  DiscordState,
} from './discord-metrics.js';

/** One interaction handled (the router reports each once, after its answer). */
export interface InteractionEvent {
  kind: 'command' | 'button' | 'modal' | 'autocomplete';
  /** The command's or button's name, from the registry: a bounded label. */
  name: string;
  outcome: string;
  durationMs: number;
}

/** One attempt at a server report (guild join or leave) and what became of it. */
export interface ServerReportEvent {
  guildId: string;
  outcome: 'sent' | 'retry' | 'dropped';
  /** Why it was not sent (an error code). */
  error?: string;
}

/** `'sent'` or `'posted'` is the success that moves the last-success timestamp; any other outcome only counts. */
export type StatsPostOutcome = 'sent' | (string & {});

export interface StatsPostInfo {
  /** When the post succeeded: epoch milliseconds or a Date. Default: now. */
  at?: number | Date;
}

export interface MetricsOptions {
  /** Register the process metrics (CPU, memory, event loop, GC...). Default true. */
  defaultMetrics?: boolean;
  /** Told when an adapter or the Discord source fails; metrics never throw at the caller. */
  logger?: Logger;
  /** Epoch milliseconds, for the stats timestamp. Default Date.now. */
  now?: () => number;
}

export interface Metrics extends GatewayStoreMetrics {
  readonly registry: Registry;
  directoryRequest(event: RequestEvent): void;
  /** The directory answers as if it had retired this API version (directory/retired.ts). */
  directoryRetired(version: string): void;
  /** Where the look-up cache's figures come from (read at scrape time). */
  setDirectoryCache(source: (() => CacheStats) | undefined): void;
  rateLimitGrant(info: GrantInfo): void;
  interaction(event: InteractionEvent): void;
  statsPost(outcome: StatsPostOutcome, info?: StatsPostInfo): void;
  serverReport(result: ServerReportEvent): void;
  /** A due reminder done: sent, failed (with its reason) or left to retry, and how late. */
  reminder(event: ReminderEvent): void;
  /** A delivery of the directory's webhook answered: how (stored, bad-key, too-large...), how fast. */
  webhookDelivery(outcome: string, seconds: number): void;
  /** A webhook event done: announced (or recorded), failed or left to retry, and how long after it came. */
  webhookEvent(event: { type: string; outcome: { kind: string }; latencyMs: number }): void;
  /** A notification of the directory (v3) taken: how it came, and what the store did with it. */
  notification(type: string, via: string, outcome: string): void;
  /** The directory's notifications connection here: its state ('standby': another process holds it). */
  notificationsState(state: string): void;
  /** Where the guild and shard gauges come from; undefined: not connected, the gauges are left out. */
  setDiscordSource(source: DiscordSource | undefined): void;
  /** Discord's REST health changed (gateway/rest-health.ts): failing, rate-limited, both or neither. */
  discordRest(conditions: DiscordRestConditions): void;
  /** Discord's gateway entered a state (gateway/gateway-health.ts): steady or troubled. */
  discordGateway(state: string): void;
  /** A connected shard lost its connection, and why (gateway/gateway-health.ts). */
  gatewayDisconnection(cause: string): void;
  /** One host of several: its name and shards, and whether it leads the statistics posts now. */
  setHost(source: HostSource | undefined): void;
}

/** The notification types counted by name (any other is `other`: the label stays bounded). */
const NOTIFY_TYPES: ReadonlySet<string> = new Set(KNOWN_NOTIFY_TYPES);
const NOTIFY_STATES = ['idle', 'connecting', 'ready', 'backoff', 'stopped', 'standby'] as const;

export interface HostSource {
  id: string;
  shardIds: readonly number[];
  leading(): boolean;
}

export interface ReminderEvent {
  key: { kind: 'guild' | 'personal' };
  latenessMs: number;
  outcome: { kind: 'sent' } | { kind: 'failed'; reason: string } | { kind: 'retry'; detail: string };
}

/** Reasons recorded as they are (a bounded set): the permission's name, not the server. */
function reminderReason(outcome: ReminderEvent['outcome']): string {
  if (outcome.kind !== 'failed') return '';
  return /^[a-z-]+(:[A-Za-z]+)?$/.test(outcome.reason) ? outcome.reason : 'other';
}

/** The limiter's shared bucket; GrantInfo.buckets always holds it, a limited route's bucket besides. */
export const GLOBAL_BUCKET = 'global';

/** Interactions: Discord allows 3 s before the first answer and 15 min to finish. */
const INTERACTION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30, 60];
/** Directory requests, retries included. */
const REQUEST_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Rate-limit waits: most are none; the route windows are seconds long. */
const WAIT_BUCKETS = [0.001, 0.1, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120];

function seconds(ms: number): number | undefined {
  if (typeof ms !== 'number' || Number.isNaN(ms)) return undefined;
  return Math.max(0, ms) / 1000;
}

type Registers = Registry[];

/** A hook that throws would break the caller (the limiter's pump, the client): never. */
function safeFor(log: Logger | undefined) {
  return <A extends unknown[]>(name: string, fn: (...args: A) => void): ((...args: A) => void) =>
    (...args: A) => {
      try {
        fn(...args);
      } catch (err) {
        try {
          log?.warn({ adapter: name, error: errorLine(err) }, 'metrics adapter failed');
        } catch {
          // Nothing is left to tell.
        }
      }
    };
}

/** The interactions the router handled: how many, and how long each took to its last answer. */
function interactionMetrics(registers: Registers): Pick<Metrics, 'interaction'> {
  const interactions = new Counter({
    name: 'bot_interactions_total',
    help: 'Interactions handled, by kind (command, button or autocomplete), name and outcome.',
    labelNames: ['kind', 'name', 'outcome'] as const,
    registers,
  });
  const interactionDuration = new Histogram({
    name: 'bot_interaction_duration_seconds',
    help: 'Time from receiving an interaction to its last answer.',
    labelNames: ['kind', 'name'] as const,
    buckets: INTERACTION_BUCKETS,
    registers,
  });
  return {
    interaction(event) {
      interactions.inc({ kind: event.kind, name: event.name, outcome: event.outcome });
      const s = seconds(event.durationMs);
      if (s !== undefined) interactionDuration.observe({ kind: event.kind, name: event.name }, s);
    },
  };
}

/**
 * The directory's API as the bot uses it: its calls, a version retired, the look-ups' cache (read
 * at scrape time), the rate limiter's waits, and the statistics posts.
 */
function directoryMetrics(
  registers: Registers,
  now: () => number,
): Pick<
  Metrics,
  'directoryRequest' | 'directoryRetired' | 'setDirectoryCache' | 'rateLimitGrant' | 'statsPost'
> {
  const requests = new Counter({
    name: 'directory_requests_total',
    help: 'Directory API calls by method, route template and final HTTP status (or error code).',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'directory_request_duration_seconds',
    help: 'Directory API call duration, rate-limit waits and retries included.',
    labelNames: ['method', 'route'] as const,
    buckets: REQUEST_BUCKETS,
    registers,
  });
  const retired = new Gauge({
    name: 'directory_api_retired',
    help: '1 when the directory answers as if it had retired the API version in use (410, or 404 on every route): move to v3.',
    labelNames: ['version'] as const,
    registers,
  });
  let cacheSource: (() => CacheStats) | undefined;
  new Gauge({
    name: 'directory_cache_entries',
    help: "Directory records in the look-ups' cache.",
    registers,
    collect() {
      const stats = cacheSource?.();
      if (stats) this.set(stats.entries);
    },
  });
  new Counter({
    name: 'directory_cache_lookups_total',
    help: 'Look-ups by how the cache answered: fresh, stale (answered, refreshed behind), miss (asked the directory), shared (joined a request under way).',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      const stats = cacheSource?.();
      if (!stats) return;
      this.reset();
      this.inc({ outcome: 'fresh' }, stats.fresh);
      this.inc({ outcome: 'stale' }, stats.stale);
      this.inc({ outcome: 'miss' }, stats.misses);
      this.inc({ outcome: 'shared' }, stats.shared);
    },
  });
  const rateLimitWait = new Histogram({
    name: 'directory_ratelimit_wait_seconds',
    help: "Time a directory request waited for the client's rate limiter, by priority and bucket.",
    labelNames: ['priority', 'bucket'] as const,
    buckets: WAIT_BUCKETS,
    registers,
  });
  const statsPosts = new Counter({
    name: 'directory_stats_posts_total',
    help: 'Bot statistics posts to the directory, by outcome.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const statsLastSuccess = new Gauge({
    name: 'directory_stats_last_success_timestamp_seconds',
    help: 'Unix time of the last successful statistics post.',
    registers,
  });
  return {
    directoryRequest(event) {
      requests.inc({ method: event.method, route: event.route, status: String(event.status) });
      const s = seconds(event.durationMs);
      if (s !== undefined) requestDuration.observe({ method: event.method, route: event.route }, s);
    },
    directoryRetired(version) {
      retired.set({ version }, 1);
    },
    setDirectoryCache(source) {
      cacheSource = source;
    },
    rateLimitGrant(info) {
      const bucket = info.buckets.find((b) => b !== GLOBAL_BUCKET) ?? GLOBAL_BUCKET;
      const s = seconds(info.waitedMs);
      if (s !== undefined) rateLimitWait.observe({ priority: info.priority, bucket }, s);
    },
    statsPost(outcome, info) {
      statsPosts.inc({ outcome });
      if (outcome !== 'sent' && outcome !== 'posted') return;
      const at = info?.at instanceof Date ? info.at.getTime() : (info?.at ?? now());
      if (Number.isFinite(at)) statsLastSuccess.set(at / 1000);
    },
  };
}

/** Due reminders done, and how late the sent ones were. */
function reminderMetrics(registers: Registers): Pick<Metrics, 'reminder'> {
  const reminders = new Counter({
    name: 'reminders_total',
    help: 'Due reminders by kind (guild, personal), outcome (sent, failed, retry) and failure reason.',
    labelNames: ['kind', 'outcome', 'reason'] as const,
    registers,
  });
  const reminderLateness = new Histogram({
    name: 'reminder_lateness_seconds',
    help: 'How long after its due time a reminder was posted.',
    labelNames: ['kind'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 15, 60, 300],
    registers,
  });
  return {
    reminder(event) {
      reminders.inc({
        kind: event.key.kind,
        outcome: event.outcome.kind,
        reason: reminderReason(event.outcome),
      });
      const s = seconds(event.latenessMs);
      if (event.outcome.kind === 'sent' && s !== undefined)
        reminderLateness.observe({ kind: event.key.kind }, s);
    },
  };
}

/**
 * What the directory tells the bot: its webhook's deliveries and the events announced from them,
 * its v3 notifications (by WebSocket or webhook), and the notifications connection's state.
 */
function webhookNotificationMetrics(
  registers: Registers,
): Pick<Metrics, 'webhookDelivery' | 'webhookEvent' | 'notification' | 'notificationsState'> {
  const webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: "Deliveries of the directory's webhook by outcome (stored, duplicate, ignored, bad-key, too-large, limited...).",
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookAnswer = new Histogram({
    name: 'webhook_delivery_seconds',
    help: "How long a delivery of the directory's webhook took to answer (stored in the store for a 200).",
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  const webhookEvents = new Counter({
    name: 'webhook_events_total',
    help: 'Webhook events done, by type and outcome (sent, failed, retry).',
    labelNames: ['type', 'outcome'] as const,
    registers,
  });
  const webhookLatency = new Histogram({
    name: 'webhook_announce_seconds',
    help: 'How long after its delivery a webhook event was announced.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 15, 60],
    registers,
  });
  const notifications = new Counter({
    name: 'directory_notifications_total',
    help: "The directory's v3 notifications taken, by type, how they came (notify: its WebSocket; webhook) and outcome (stored, duplicate, ignored, full).",
    labelNames: ['type', 'via', 'outcome'] as const,
    registers,
  });
  const notificationsConnection = new Gauge({
    name: 'directory_notifications_connection',
    help: "The directory's notifications connection in this process: 1 for its state now (ready, connecting, backoff, standby: another process holds it, stopped).",
    labelNames: ['state'] as const,
    registers,
  });
  return {
    webhookDelivery(outcome, s) {
      webhookDeliveries.inc({ outcome });
      if (Number.isFinite(s) && s >= 0) webhookAnswer.observe(s);
    },
    webhookEvent(event) {
      webhookEvents.inc({ type: event.type, outcome: event.outcome.kind });
      const s = seconds(event.latencyMs);
      if (event.outcome.kind === 'sent' && s !== undefined) webhookLatency.observe(s);
    },
    notification(type, via, outcome) {
      notifications.inc({ type: NOTIFY_TYPES.has(type) ? type : 'other', via, outcome });
    },
    notificationsState(state) {
      for (const known of NOTIFY_STATES)
        notificationsConnection.set({ state: known }, known === state ? 1 : 0);
    },
  };
}

/** Guild join and leave reports to the directory. */
function serverReportMetrics(registers: Registers): Pick<Metrics, 'serverReport'> {
  const serverReports = new Counter({
    name: 'directory_server_reports_total',
    help: 'Guild join and leave reports to the directory, by outcome (sent, retry, dropped).',
    labelNames: ['outcome'] as const,
    registers,
  });
  return {
    serverReport(result) {
      serverReports.inc({ outcome: result.outcome });
    },
  };
}

/** One host of several: which it is, its shards, and whether it leads the statistics posts. */
function hostMetrics(registers: Registers): Pick<Metrics, 'setHost'> {
  let host: HostSource | undefined;
  new Gauge({
    name: 'bot_host_info',
    help: 'One host of several: 1, labelled with its HOST_ID and its shards (SHARD_IDS).',
    labelNames: ['host', 'shards'] as const,
    registers,
    collect() {
      this.reset();
      if (host) this.set({ host: host.id, shards: host.shardIds.join(',') }, 1);
    },
  });
  new Gauge({
    name: 'bot_stats_leader',
    help: 'One host of several: 1 while this host leads the statistics posts, else 0.',
    labelNames: ['host'] as const,
    registers,
    collect() {
      this.reset();
      if (host) this.set({ host: host.id }, host.leading() ? 1 : 0);
    },
  });
  return {
    setHost(next) {
      host = next;
    },
  };
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const now = options.now ?? Date.now;
  const log = options.logger?.child({ component: 'metrics' });
  const safe = safeFor(log);

  // Made in this order, which is the order of the families at a scrape.
  const interactions = interactionMetrics(registers);
  const directory = directoryMetrics(registers, now);
  const reminders = reminderMetrics(registers);
  const told = webhookNotificationMetrics(registers);
  const reports = serverReportMetrics(registers);
  const discord = discordMetrics(registers, log);
  const discordRest = discordRestMetrics(registers);
  const discordGateway = discordGatewayMetrics(registers);
  const hosts = hostMetrics(registers);
  const gatewayStore = gatewayStoreMetrics(registers, now);

  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  // The adapters' methods use no `this`: handed over as they are, each behind `safe`; the setters
  // only keep what they are given.
  return {
    registry,
    directoryRequest: safe('directoryRequest', directory.directoryRequest),
    directoryRetired: safe('directoryRetired', directory.directoryRetired),
    setDirectoryCache: directory.setDirectoryCache,
    rateLimitGrant: safe('rateLimitGrant', directory.rateLimitGrant),
    interaction: safe('interaction', interactions.interaction),
    statsPost: safe('statsPost', directory.statsPost),
    serverReport: safe('serverReport', reports.serverReport),
    reminder: safe('reminder', reminders.reminder),
    webhookDelivery: safe('webhookDelivery', told.webhookDelivery),
    webhookEvent: safe('webhookEvent', told.webhookEvent),
    notification: safe('notification', told.notification),
    notificationsState: safe('notificationsState', told.notificationsState),
    gatewaySession: safe('gatewaySession', gatewayStore.gatewaySession),
    sessionStartLimit: safe('sessionStartLimit', gatewayStore.sessionStartLimit),
    storeQuery: safe('storeQuery', gatewayStore.storeQuery),
    setStoreHealth: gatewayStore.setStoreHealth,
    setDiscordSource: discord.setDiscordSource,
    discordRest: safe('discordRest', discordRest.discordRest),
    discordGateway: safe('discordGateway', discordGateway.discordGateway),
    gatewayDisconnection: safe('gatewayDisconnection', discordGateway.gatewayDisconnection),
    setHost: hosts.setHost,
  };
}

/**
 * Discord as this process sees it, read at scrape time from the source given to
 * `setDiscordSource` (metrics.ts): the guilds, the shards' status and heartbeat round trips. Apart
 * from the families fed by events: these gauges read someone else's code at every scrape, once,
 * and a malformed answer is a warning, not a failed scrape. Beside them, Discord's REST health
 * (discordRestMetrics), fed by its changes (gateway/rest-health.ts), which are rare.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { errorLine } from '../log/error-line.js';
import type { Logger } from '../log/logger.js';

export interface DiscordShardState {
  id: number;
  ready: boolean;
  /** Gateway heartbeat round trip in milliseconds; negative or NaN while unknown (discord.js: -1). */
  ping: number;
}

export interface DiscordState {
  guilds: number;
  shards: readonly DiscordShardState[];
}

/** Read at every scrape; keep it cheap (cache sizes, not requests). */
export type DiscordSource = () => DiscordState;

function isShard(value: unknown): value is DiscordShardState {
  if (typeof value !== 'object' || value === null) return false;
  const { id, ready, ping } = value as Partial<Record<keyof DiscordShardState, unknown>>;
  return typeof id === 'number' && typeof ready === 'boolean' && typeof ping === 'number';
}

/** The source is someone else's code: a malformed answer is an error, not a crashed scrape. */
function normalize(value: unknown): DiscordState {
  const { guilds, shards } = (value ?? {}) as Partial<Record<keyof DiscordState, unknown>>;
  if (typeof guilds !== 'number' || !Number.isFinite(guilds) || !Array.isArray(shards)) {
    throw new TypeError('expected { guilds: number, shards: Array<{ id, ready, ping }> }');
  }
  const valid = shards.filter(isShard);
  if (valid.length !== shards.length) throw new TypeError('a shard is not { id, ready, ping }');
  return { guilds, shards: valid };
}

/**
 * Discord as this process sees it, read at scrape time from the source given to
 * `setDiscordSource`: its guilds, its shards' status and heartbeat round trips.
 */
export function discordMetrics(
  registers: Registry[],
  log: Logger | undefined,
): { setDiscordSource(source: DiscordSource | undefined): void } {
  let source: DiscordSource | undefined;
  /**
   * One read of the source per scrape: the registry runs every collect callback in the same
   * synchronous pass, so the snapshot is kept until the next microtask.
   */
  let snapshot: { state: DiscordState | undefined } | undefined;
  function discordState(): DiscordState | undefined {
    if (snapshot) return snapshot.state;
    let state: DiscordState | undefined;
    try {
      const read: unknown = source?.();
      if (read !== undefined) state = normalize(read);
    } catch (err) {
      log?.warn({ error: errorLine(err) }, 'discord metrics source failed');
    }
    snapshot = { state };
    queueMicrotask(() => {
      snapshot = undefined;
    });
    return state;
  }

  new Gauge({
    name: 'discord_guilds',
    help: 'Guilds the bot is in.',
    registers,
    collect() {
      this.reset();
      const state = discordState();
      // An unlabelled gauge comes back from reset() as 0: unknown must read as absent, not as none.
      if (state) this.set(state.guilds);
      else this.remove();
    },
  });
  new Gauge({
    name: 'discord_shards',
    help: 'Gateway shards by status (ready or not_ready).',
    labelNames: ['status'] as const,
    registers,
    collect() {
      this.reset();
      const state = discordState();
      if (!state) return;
      const ready = state.shards.filter((s) => s.ready).length;
      this.set({ status: 'ready' }, ready);
      this.set({ status: 'not_ready' }, state.shards.length - ready);
    },
  });
  new Gauge({
    name: 'discord_gateway_ping_seconds',
    help: 'Gateway heartbeat round trip by shard; left out while unknown.',
    labelNames: ['shard'] as const,
    registers,
    collect() {
      this.reset();
      const state = discordState();
      for (const shard of state?.shards ?? []) {
        if (Number.isFinite(shard.ping) && shard.ping >= 0) {
          this.set({ shard: String(shard.id) }, shard.ping / 1000);
        }
      }
    },
  });
  return {
    setDiscordSource(next) {
      source = next;
      snapshot = undefined;
    },
  };
}

/** What is wrong with Discord's REST now (gateway/rest-health.ts); both may be at once. */
export interface DiscordRestConditions {
  failing: boolean;
  rateLimited: boolean;
}

const REST_STATES = ['ok', 'failing', 'rate_limited'] as const;

function restStates(c: DiscordRestConditions): Record<(typeof REST_STATES)[number], boolean> {
  return { ok: !c.failing && !c.rateLimited, failing: c.failing, rate_limited: c.rateLimited };
}

/**
 * A family of states, several of which may hold at once: a gauge per state (1 while in it) and
 * the times each was entered. Every series exists from the start, for the alert rules.
 */
function stateMetrics<S extends string>(
  registers: Registry[],
  o: { name: string; help: string; changesHelp: string; states: readonly S[]; initial: Record<S, boolean> },
): (now: Record<S, boolean>) => void {
  const state = new Gauge({ name: o.name, help: o.help, labelNames: ['state'] as const, registers });
  const entered = new Counter({
    name: `${o.name}_changes_total`,
    help: o.changesHelp,
    labelNames: ['state'] as const,
    registers,
  });
  let last = o.initial;
  for (const name of o.states) {
    state.set({ state: name }, last[name] ? 1 : 0);
    entered.inc({ state: name }, 0);
  }
  return (next) => {
    for (const name of o.states) {
      state.set({ state: name }, next[name] ? 1 : 0);
      if (next[name] && !last[name]) entered.inc({ state: name });
    }
    last = next;
  };
}

/**
 * Discord's REST health: a gauge per state (1 while in it; ok while neither trouble is) and the
 * times each was entered. Every series exists from the start at 0 (ok at 1), for the alert rules.
 */
export function discordRestMetrics(registers: Registry[]): {
  discordRest(conditions: DiscordRestConditions): void;
} {
  const set = stateMetrics(registers, {
    name: 'discord_rest_state',
    help: "Discord's REST as the bot sees it: 1 for each state it is in (failing: requests fail with 5xx or cannot reach it; rate_limited: a global 429 or a long route hold; ok: neither).",
    changesHelp: "Times Discord's REST entered each state (ok, failing, rate_limited).",
    states: REST_STATES,
    initial: restStates({ failing: false, rateLimited: false }),
  });
  return { discordRest: (conditions) => set(restStates(conditions)) };
}

/** The gateway's states (gateway/gateway-health.ts). */
const GATEWAY_STATES = ['steady', 'troubled'] as const;

/**
 * Discord's gateway health: a gauge per state (steady at 1 from the start, for the alert rules),
 * the times each was entered, and the disconnections of connected shards by cause (the causes
 * are gateway-health.ts's: reconnect_requested, session_invalidated, heartbeat_unacknowledged,
 * connection_lost, closed).
 */
export function discordGatewayMetrics(registers: Registry[]): {
  discordGateway(state: string): void;
  gatewayDisconnection(cause: string): void;
} {
  const set = stateMetrics(registers, {
    name: 'discord_gateway_state',
    help: "Discord's gateway as this process sees it: 1 for the state it is in (troubled: a shard lost its connection and they have not all been connected again for 10 s; steady: otherwise).",
    changesHelp: "Times Discord's gateway entered each state (steady, troubled).",
    states: GATEWAY_STATES,
    initial: { steady: true, troubled: false },
  });
  const disconnections = new Counter({
    name: 'discord_gateway_disconnections_total',
    help: 'Connected shards that lost their connection, by cause (reconnect_requested, session_invalidated, heartbeat_unacknowledged, connection_lost, closed).',
    labelNames: ['cause'] as const,
    registers,
  });
  return {
    discordGateway(now) {
      set({ steady: now === 'steady', troubled: now === 'troubled' });
    },
    gatewayDisconnection(cause) {
      disconnections.inc({ cause });
    },
  };
}

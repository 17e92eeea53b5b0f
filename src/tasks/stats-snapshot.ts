/**
 * Pure checks of a statistics snapshot: whether every expected shard is ready and reported exactly
 * once, and the totals to post. The snapshot may come from other processes, so it is untrusted.
 */

export interface StatsSnapshot {
  /** Shards expected (the total shard count) and, for each, whether it is ready and its numbers. */
  expectedShards: number;
  shards: ReadonlyArray<{ id: number; ready: boolean; guilds: number; members: number }>;
}

/** The body of POST /stats. */
export interface StatsBody {
  servers: number;
  shards: number;
  users: number;
}

/** Shard IDs listed per problem in a log line; a thousand-shard bot must not write a novel. */
const LISTED_SHARDS = 20;

export type SnapshotCheck =
  | { kind: 'ready'; totals: StatsBody }
  | {
      kind: 'not-ready';
      expectedShards: number;
      /** How many of the IDs 0..expectedShards-1 nobody reported. */
      missingCount: number;
      /** The first few of each, for the log. */
      missing: number[];
      notReady: number[];
      duplicate: number[];
      unexpected: number[];
    }
  | { kind: 'invalid'; problem: string };

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function note(list: number[], id: number): void {
  if (list.length < LISTED_SHARDS) list.push(id);
}

/**
 * Why a snapshot can or cannot be posted. The snapshot may come from other processes (a
 * broadcastEval), so it is checked as untrusted data.
 */
export function inspectSnapshot(snapshot: unknown): SnapshotCheck {
  const invalid = (problem: string): SnapshotCheck => ({ kind: 'invalid', problem });
  if (typeof snapshot !== 'object' || snapshot === null) return invalid('the snapshot is not an object');
  const { expectedShards, shards } = snapshot as Partial<Record<keyof StatsSnapshot, unknown>>;
  if (!isCount(expectedShards) || expectedShards < 1) {
    return invalid('expectedShards is not a whole number of at least 1');
  }
  if (!Array.isArray(shards)) return invalid('shards is not an array');
  const seen = new Set<number>();
  const notReady: number[] = [];
  const duplicate: number[] = [];
  const unexpected: number[] = [];
  let servers = 0;
  let users = 0;
  for (const shard of shards as unknown[]) {
    if (typeof shard !== 'object' || shard === null) return invalid('a shard entry is not an object');
    const { id, ready, guilds, members } = shard as Record<string, unknown>;
    if (!isCount(id)) return invalid('a shard id is not a whole number of at least 0');
    if (typeof ready !== 'boolean' || !isCount(guilds) || !isCount(members)) {
      return invalid(`shard ${id} reports a readiness or a count of the wrong type`);
    }
    // A shard reported twice (say, by a process and its respawn) makes the sum unreliable.
    if (id >= expectedShards) note(unexpected, id);
    else if (seen.has(id)) note(duplicate, id);
    else seen.add(id);
    if (!ready) note(notReady, id);
    servers += guilds;
    users += members;
  }
  const missingCount = expectedShards - seen.size;
  const missing: number[] = [];
  // Stops after a few finds: at most seen.size + LISTED_SHARDS steps, whatever expectedShards is.
  for (let id = 0; missingCount > 0 && id < expectedShards && missing.length < LISTED_SHARDS; id += 1) {
    if (!seen.has(id)) missing.push(id);
  }
  if (missingCount > 0 || notReady.length > 0 || duplicate.length > 0 || unexpected.length > 0) {
    return { kind: 'not-ready', expectedShards, missingCount, missing, notReady, duplicate, unexpected };
  }
  if (!Number.isSafeInteger(servers) || !Number.isSafeInteger(users)) {
    return invalid('the totals are too large to post');
  }
  return { kind: 'ready', totals: { servers, shards: expectedShards, users } };
}

/** Pure: totals from a snapshot, or null when a shard is missing or not ready. */
export function totals(s: StatsSnapshot): StatsBody | null {
  const check = inspectSnapshot(s);
  return check.kind === 'ready' ? check.totals : null;
}

/** The log fields that say why a snapshot is not ready. */
export function notReadyFields(
  check: Extract<SnapshotCheck, { kind: 'not-ready' }>,
): Record<string, unknown> {
  const fields: Record<string, unknown> = { expectedShards: check.expectedShards };
  if (check.missingCount > 0) {
    fields.missingCount = check.missingCount;
    fields.missing = check.missing;
  }
  if (check.notReady.length > 0) fields.notReady = check.notReady;
  if (check.duplicate.length > 0) fields.duplicate = check.duplicate;
  if (check.unexpected.length > 0) fields.unexpected = check.unexpected;
  return fields;
}

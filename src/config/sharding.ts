/**
 * The sharding variables: SHARD_COUNT, one host's shards of several (SHARD_IDS, or HOST_INDEX ×
 * SHARDS_PER_HOST), HOST_ID and HOST_GONE_AFTER, how they must agree, and the SHARDS a
 * ShardingManager hands its processes.
 */
import type { OperatorMessage } from '../i18n/operator.js';
import { parseDuration, variable } from './variables.js';

export function shardCount() {
  return variable('auto' as const, (value, fail): number | 'auto' => {
    if (value === 'auto') return 'auto';
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 10_000) {
      return fail('shardCount');
    }
    return n;
  });
}

/** SHARD_IDS: `0-3`, `0,1,2,3`, or both (`0-1,4`); ascending, no repeats. */
export function shardIds() {
  return variable(undefined, (value, fail): number[] => {
    const ids: number[] = [];
    for (const part of value.split(',')) {
      const match = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/.exec(part);
      if (!match) return fail('shardIds');
      const from = Number(match[1]);
      const to = match[2] === undefined ? from : Number(match[2]);
      if (to < from) return fail('shardRangeBackwards', { from, to });
      for (let id = from; id <= to; id++) ids.push(id);
    }
    const sorted = [...new Set(ids)].sort((a, b) => a - b);
    if (sorted.length !== ids.length) return fail('shardIdTwice');
    if (sorted.length > 1_000) return fail('shardIdsTooMany');
    return sorted;
  });
}

/** HOST_ID: how this host is named in the store and the logs; letters, digits, . _ - : */
export const hostId = variable(undefined, (value, fail) =>
  /^[A-Za-z0-9._:-]{1,100}$/.test(value) ? value : fail('hostId'),
);

/**
 * HOST_GONE_AFTER: how long a host may write none of its shards before the others answer its ups
 * in flight and send its servers' reminders. At least 10 s: two of a live host's writes (every 5 s).
 */
export function hostGoneAfter() {
  return variable(60_000, (value, fail) => {
    const ms = parseDuration(value);
    if (ms === undefined) return fail('hostGoneAfter');
    if (ms < 10_000) return fail('hostGoneAfterShort');
    if (ms > 600_000) return fail('hostGoneAfterLong');
    return ms;
  });
}

/**
 * This host's shards: SHARD_IDS, or HOST_INDEX × SHARDS_PER_HOST (a StatefulSet's pod ordinal);
 * either needs a fixed SHARD_COUNT that every id is below.
 */
export function hostShards(e: {
  SHARD_IDS: number[] | undefined;
  HOST_INDEX: number | undefined;
  SHARDS_PER_HOST: number | undefined;
}): number[] | undefined {
  if (e.SHARD_IDS !== undefined) return e.SHARD_IDS;
  if (e.HOST_INDEX === undefined || e.SHARDS_PER_HOST === undefined) return undefined;
  const first = e.HOST_INDEX * e.SHARDS_PER_HOST;
  return Array.from({ length: e.SHARDS_PER_HOST }, (_, i) => first + i);
}

export const HOST_VARIABLES: ReadonlySet<PropertyKey> = new Set([
  'SHARD_COUNT',
  'SHARD_IDS',
  'HOST_INDEX',
  'SHARDS_PER_HOST',
  'DATABASE_URL',
  'SHARDING_MANAGER',
]);

export function hostProblems(e: {
  SHARD_COUNT: number | 'auto';
  SHARD_IDS: number[] | undefined;
  HOST_INDEX: number | undefined;
  SHARDS_PER_HOST: number | undefined;
  DATABASE_URL: string | undefined;
  SHARDING_MANAGER: boolean;
}): Array<[string, OperatorMessage]> {
  const problems: Array<[string, OperatorMessage]> = [];
  if (e.SHARD_IDS !== undefined && (e.HOST_INDEX !== undefined || e.SHARDS_PER_HOST !== undefined)) {
    problems.push(['SHARD_IDS', { key: 'shardIdsAndHostIndex' }]);
    return problems;
  }
  if ((e.HOST_INDEX === undefined) !== (e.SHARDS_PER_HOST === undefined)) {
    const missing = e.HOST_INDEX === undefined ? 'HOST_INDEX' : 'SHARDS_PER_HOST';
    problems.push([missing, { key: 'hostIndexTogether' }]);
    return problems;
  }
  const ids = hostShards(e);
  if (ids === undefined) return problems;
  const name = e.SHARD_IDS !== undefined ? 'SHARD_IDS' : 'HOST_INDEX';
  if (e.SHARD_COUNT === 'auto') {
    problems.push(['SHARD_COUNT', { key: 'shardCountFixed', params: { name } }]);
  } else {
    const beyond = ids.filter((id) => id >= (e.SHARD_COUNT as number));
    if (beyond.length > 0) {
      problems.push([
        name,
        { key: 'shardMissing', params: { shard: beyond[0] ?? 0, last: e.SHARD_COUNT - 1 } },
      ]);
    }
  }
  if (e.SHARDING_MANAGER) problems.push([name, { key: 'shardsWithManager' }]);
  if (e.DATABASE_URL === undefined) {
    problems.push(['DATABASE_URL', { key: 'hostsNeedDatabase', params: { name } }]);
  }
  return problems;
}

/** SHARDS as discord.js's ShardingManager writes it: a JSON array of shard IDs. */
export function parseShardList(value: string | undefined): number[] {
  if (value === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((n): n is number => Number.isInteger(n) && n >= 0) : [];
  } catch {
    return [];
  }
}

/**
 * The shards this process will run and their count, when the configuration says (not with
 * SHARD_COUNT=auto, which Discord decides at login): what its gateway sessions are read for as it
 * starts (gateway/gateway-sessions.ts).
 */
export function expectedShards(sharding: {
  shardCount: number | 'auto';
  isChild: boolean;
  childShards: readonly number[];
  hostShards: readonly number[] | undefined;
}): { shardIds: readonly number[]; shardCount: number } | undefined {
  const { shardCount } = sharding;
  if (typeof shardCount !== 'number') return undefined;
  const shardIds = sharding.isChild
    ? sharding.childShards
    : (sharding.hostShards ?? [...Array(shardCount).keys()]);
  return { shardIds, shardCount };
}

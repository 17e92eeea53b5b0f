/**
 * A bot still on v2 when the directory has retired it (its documentation marks v1 and v2
 * Inactive): the operator is told once, in one error line that says how to move to v3, and the
 * metric directory_api_retired{version="v2"} is 1. A bot or profile that does not exist (a 404 on
 * a look-up) is not retirement.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createServices, type Services } from '../../src/app/services.js';
import { loadConfig } from '../../src/config/env.js';
import { NotFoundError } from '../../src/directory/errors.js';
import { createLogger } from '../../src/log/logger.js';
import { createMetrics, type Metrics } from '../../src/ops/metrics.js';
import { type Emulator, IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { tempDir } from '../support/temp.js';

let emu: Emulator | undefined;
let running: { services: Services; remove: () => void } | undefined;

afterEach(async () => {
  await running?.services.close();
  running?.remove();
  await emu?.close();
  running = undefined;
  emu = undefined;
});

async function v2Bot(): Promise<{ services: Services; metrics: Metrics; lines: string[] }> {
  emu = await startEmulator({ rateLimits: false });
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const metrics = createMetrics({ defaultMetrics: false });
  const data = tempDir('v2-retired-');
  const services = await createServices({
    config: loadConfig({
      DATA_DIR: data.path,
      DIRECTORY_API_URL: emu.url,
      DIRECTORY_API_VERSION: 'v2',
      DIRECTORY_TOKEN: TOKENS.serviceBot,
      DIRECTORY_MAX_RETRIES: '0',
      DIRECTORY_CACHE_SIZE: '0',
    }),
    logger: createLogger({ level: 'info', destination }),
    metrics,
    shards: {
      snapshot: () => ({ shards: [], expectedShards: 1 }) as never,
      latest: () => ({ snapshot: { shards: [], expectedShards: 1 }, connected: false, guilds: 0 }) as never,
    },
    tasks: { stats: false, reports: false },
  });
  running = { services, remove: data.remove };
  return { services, metrics, lines };
}

const retiredLines = (lines: string[]) => lines.filter((l) => l.includes('retired API v2'));
const gauge = async (metrics: Metrics) =>
  (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith('directory_api_retired{'));

describe('a v2 the directory has retired', () => {
  it('410 everywhere: one error line with the way to v3, and the metric', async () => {
    const { services, metrics, lines } = await v2Bot();
    emu?.faults.add({ kind: 'status', status: 410 });
    for (let i = 0; i < 3; i += 1) await services.directory.getBot(IDS.plainBot).catch(() => undefined);
    const said = retiredLines(lines);
    expect(said).toHaveLength(1);
    const line = JSON.parse(said[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ level: 50, version: 'v2', status: 410 });
    expect(String(line.msg)).toContain('set DIRECTORY_API_VERSION=v3 (and remove DIRECTORY_TOKEN_KIND)');
    expect(await gauge(metrics)).toBe('directory_api_retired{version="v2"} 1');
  });

  it('a 404 on POST /stats, a route that names no resource, is retirement too', async () => {
    const { services, metrics, lines } = await v2Bot();
    emu?.faults.add({ kind: 'status', status: 404, path: /^\/stats$/ });
    await services.directory.postBotStats({ servers: 1, shards: 1, users: 1 }).catch(() => undefined);
    expect(retiredLines(lines)).toHaveLength(1);
    expect(await gauge(metrics)).toBe('directory_api_retired{version="v2"} 1');
  });

  it('a bot that does not exist is not: nothing said, no metric', async () => {
    const { services, metrics, lines } = await v2Bot();
    await expect(services.directory.getBot('999999999999999999')).rejects.toThrow(NotFoundError);
    await expect(services.directory.getProfile('999999999999999999')).rejects.toThrow(NotFoundError);
    await services.directory.getServer(IDS.serverFresh);
    expect(retiredLines(lines)).toEqual([]);
    expect(await gauge(metrics)).toBeUndefined();
  });
});

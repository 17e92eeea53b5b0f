/**
 * The SQLite file's disk fills while the bot runs (a real 4 MB tmpfs, filled by a filler file),
 * as an operator and a server's members meet it: /up keeps answering; the store says "full"
 * once (one line, store_problem{problem="full"} 1, /readyz 503 "store":"full") without flapping;
 * once the filler is deleted it is writable again by itself (one line, /readyz 200), every up
 * taken meanwhile is in the history exactly once, and nothing written before is damaged.
 *
 * Needs to mount a tmpfs (root, as in CI's container); where mount is refused, it says so and
 * is skipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { type OpsServer, startOpsServer } from '../../src/ops/server.js';
import { SQLITE_FILE_NAME } from '../../src/store/index.js';
import { makeGuild } from '../discord/index.js';
import { type Harness, startHarness } from '../e2e/harness.js';
import { IDS } from '../emulator/index.js';
import { readyz } from '../ops/helpers.js';
import { httpGet } from '../support/http.js';
import { eventually } from '../support/wait.js';
import { fillDisk, mountTmpfs, unmount } from './tmpfs.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'Fresh Guild' });
const UPS_WHILE_FULL = 5;
const FULL_LINE = 'cannot grow: the disk is full';
const WELL_LINE = 'can be written again';

const root = mkdtempSync(join(tmpdir(), 'full-disk-'));
const dataDir = join(root, 'data');
const filler = join(dataDir, 'filler');

const mounted = mountTmpfs(dataDir, '4m', 'full-disk');
let h: Harness;
let ops: OpsServer;
const metrics = createMetrics({ defaultMetrics: false });

beforeAll(async () => {
  if (!mounted) return;
  h = await startHarness({ guilds: [guild], env: { DATA_DIR: dataDir } });
  h.emu.setCooldownMs(0);
  // The ops endpoint over this bot, as run.ts wires it (the harness runs none of its own).
  metrics.setStoreHealth(h.bot.store.health);
  ops = await startOpsServer({
    port: 0,
    metrics,
    isReady: () => h.bot.readiness(),
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await ops?.close();
  await h?.close();
  if (mounted) unmount(dataDir);
  rmSync(root, { recursive: true, force: true });
});

const linesSaying = (text: string) => h.entries().filter((e) => String(e.msg ?? '').includes(text));

async function gauge(name: string): Promise<number | undefined> {
  const body = (await httpGet(ops.port, '/metrics')).body;
  const line = body.split('\n').find((l) => l.startsWith(name));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe.skipIf(!mounted)('SQLite on a full disk (a 4 MB tmpfs)', () => {
  it('answers keep coming, one line per state, /readyz as documented, and every up recorded once', async () => {
    const before = await h.run({ guildId: guild.id, name: 'up' });
    expect(before.outcome).toBe('success');
    expect((await readyz(ops.port)).status).toBe(200);

    fillDisk(filler);
    const users: string[] = [before.line.userId as string];
    const fullAt = performance.now();
    for (let i = 0; i < UPS_WHILE_FULL; i++) {
      const answer = await h.run({ guildId: guild.id, name: 'up' });
      expect(answer.outcome).toBe('success');
      users.push(answer.line.userId as string);
    }
    const ready = await readyz(ops.port);
    expect(ready.status).toBe(503);
    expect((ready.body.detail as { store?: string }).store).toBe('full');
    expect(await gauge('store_problem{problem="full"}')).toBe(1);
    expect(await gauge('store_writes_waiting')).toBeGreaterThanOrEqual(UPS_WHILE_FULL);
    // One line for the state, none for each write.
    expect(linesSaying(FULL_LINE)).toHaveLength(1);
    expect(linesSaying(WELL_LINE)).toHaveLength(0);

    rmSync(filler);
    const freedAt = performance.now();
    await eventually(
      async () => ((await readyz(ops.port)).status === 200 ? true : undefined),
      10_000,
      '/readyz 200 once there is room',
    );
    const recoveredMs = Math.round(performance.now() - freedAt);
    expect(linesSaying(WELL_LINE)).toHaveLength(1);
    expect(linesSaying(FULL_LINE)).toHaveLength(1);
    expect(await gauge('store_problem{problem="full"}')).toBe(0);
    expect(await gauge('store_writes_waiting')).toBe(0);

    // Writing goes on by itself.
    const after = await h.run({ guildId: guild.id, name: 'up' });
    expect(after.outcome).toBe('success');
    users.push(after.line.userId as string);
    const rows = await h.bot.store.run((db) =>
      db.selectFrom('up_history').select(['id', 'user_id']).where('guild_id', '=', guild.id).execute(),
    );
    expect(rows.map((r) => r.user_id).sort()).toEqual([...users].sort());
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);

    const check = new Sqlite(join(dataDir, SQLITE_FILE_NAME), { readonly: true });
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      check.close();
    }
    console.log(
      `full-disk (tmpfs): ${linesSaying(FULL_LINE).length} "full" line and ${linesSaying(WELL_LINE).length} "writable again" line ` +
        `in ${Math.round((performance.now() - fullAt) / 1000)} s for ${UPS_WHILE_FULL} ups; /readyz 200 ${recoveredMs} ms after the space was freed`,
    );
  }, 60_000);
});

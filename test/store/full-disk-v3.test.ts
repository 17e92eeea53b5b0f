/**
 * The SQLite file's disk fills while the bot runs on the directory's v3, whose ups are made on the
 * site and told over its notifications WebSocket (a real 4 MB tmpfs, filled by a filler file).
 * The directory does not tell an up twice: one the store could not take while the disk was full
 * must be held and written once there is room, not dropped, and the connection must stay up
 * meanwhile (nobody can take its lease on a full disk, and a second connection's events would be
 * the same rows). Counted in the up history (/leaderboard) exactly once each.
 *
 * Needs to mount a tmpfs (root, as in CI's container); where mount is refused, it says so and
 * is skipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGuild, makeUser } from '../discord/index.js';
import { type Harness, startHarness } from '../e2e/harness.js';
import { IDS, V3_KEYS } from '../emulator/index.js';
import { eventually } from '../support/wait.js';
import { fillDisk, mountTmpfs, unmount } from './tmpfs.js';

// The sample server: the staff key's account owns it, so its events reach the bot's socket.
const guild = makeGuild({ id: IDS.serverFresh, name: 'Fresh Guild' });
const members = Array.from({ length: 6 }, (_, i) => makeUser({ username: `upper_${i}` }));
const UPS_WHILE_FULL = 5;

const root = mkdtempSync(join(tmpdir(), 'full-disk-v3-'));
const dataDir = join(root, 'data');
const filler = join(dataDir, 'filler');
const mounted = mountTmpfs(dataDir, '4m', 'full-disk-v3');
let h: Harness;

beforeAll(async () => {
  if (!mounted) return;
  h = await startHarness({
    guilds: [guild],
    users: members,
    env: {
      DATA_DIR: dataDir,
      DIRECTORY_API_VERSION: 'v3',
      DIRECTORY_TOKEN_KIND: '',
      DIRECTORY_ROUTE_RATE_LIMIT: '',
      DIRECTORY_TOKEN: V3_KEYS.staff,
      // The notifications are held by the process that posts statistics: its first post is far off.
      STATS_FIRST_DELAY: '10m',
    },
    postStats: true,
  });
  await eventually(
    () => (h.bot.notifications?.state === 'ready' ? true : undefined),
    15_000,
    'the notifications socket ready',
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
  if (mounted) unmount(dataDir);
  rmSync(root, { recursive: true, force: true });
});

async function historyUsers(): Promise<string[]> {
  const rows = await h.bot.store.run((db) =>
    db.selectFrom('up_history').select(['user_id']).where('guild_id', '=', guild.id).execute(),
  );
  return rows.map((r) => r.user_id).sort();
}

describe.skipIf(!mounted)('SQLite on a full disk, v3 notifications (a 4 MB tmpfs)', () => {
  it('ups told while the disk is full are recorded once there is room, each once; the connection stays up', async () => {
    const [first, ...rest] = members;
    h.emu.v3.upOnSite(guild.id, first!.id);
    await eventually(
      async () => ((await historyUsers()).length === 1 ? true : undefined),
      10_000,
      'the first up',
    );
    const socketsBefore = h.emu.v3.sockets().map((s) => s.id);

    fillDisk(filler);
    for (const member of rest.slice(0, UPS_WHILE_FULL)) {
      h.emu.v3.upOnSite(guild.id, member.id);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // Longer than the lease (15 s) would last unrenewed: the connection must not be closed for it.
    await new Promise((resolve) => setTimeout(resolve, 17_000));
    expect(h.bot.notifications?.state).toBe('ready');
    // The ups the disk refused wait in memory for room (a small write may still find room in
    // SQLite's WAL: at least one of them did not).
    expect(h.bot.store.health.waiting?.()).toBeGreaterThanOrEqual(1);
    expect(h.bot.store.health.problem()).toMatchObject({ problem: 'full' });
    expect(h.emu.v3.sockets().map((s) => s.id)).toEqual(socketsBefore);
    const lost = h.entries().filter((e) => /they are lost/.test(String(e.msg)));
    expect(lost).toEqual([]);

    rmSync(filler);
    const expected = members.map((m) => m.id).sort();
    await eventually(
      async () => ((await historyUsers()).length >= expected.length ? true : undefined),
      20_000,
      'every up told meanwhile recorded once there is room',
    );
    // A moment for anything recorded twice to show.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await historyUsers()).toEqual(expected);
  }, 90_000);
});

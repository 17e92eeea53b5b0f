/**
 * One notifications connection per key across processes (issue 37), with processes that die. Three
 * processes on one PostgreSQL schema (of the test's own, dropped after) each run the built
 * NotificationsService (test/ops/notify-holder.mjs: the real intake over WebhookRepository, the
 * real key lease) for the same key (V3_KEYS.staff) against the emulator's gateway, with a lease of
 * LEASE_MS renewed every RENEW_MS.
 *
 * - Over several renew periods the gateway has exactly one authenticated socket for the key, and
 *   each up given on the site is one row of webhook_events, taken by one process once.
 * - The holder killed with `kill -9`: another process takes the lease once it runs out and
 *   connects (within LEASE_MS + RENEW_MS + the time to connect), and again there is exactly one
 *   socket. An up given while nobody is connected is not stored: v3 does not replay what it sent
 *   (docs/notifications.md: the cost of a takeover). Ups after the takeover are stored once.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { type Emulator, IDS, startEmulator, V3_KEYS } from '../emulator/index.js';
import { freshPlace, type Place } from '../store/places.js';
import { NodeChild } from '../support/child.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { eventually, START_BOUND_MS, sleep, withTimeout } from '../support/wait.js';

const SCRIPT = fileURLToPath(new URL('./notify-holder.mjs', import.meta.url));
const PROCESSES = 3;
const LEASE_MS = 2_000;
const RENEW_MS = 500;
/** Opening and authenticating the WebSocket, on a busy machine. */
const CONNECT_MS = 8_000;
const SERVER = IDS.serverFresh;

/** The authenticated sockets of the key open at the gateway now. */
function keySockets(emu: Emulator) {
  return emu.v3.sockets().filter((s) => s.authed && s.key === V3_KEYS.staff);
}

/** The processes whose connection is ready now, by their last 'notify state' line. */
function holders(procs: readonly NodeChild[]): NodeChild[] {
  return procs.filter((p) => {
    if (p.exit) return false;
    const states = p.entries().filter((e) => e.msg === 'notify state');
    return states.at(-1)?.state === 'ready';
  });
}

/** Watches the gateway for `periods` renew periods: the fewest and most sockets of the key seen. */
async function watchSockets(emu: Emulator, periods: number): Promise<{ min: number; max: number }> {
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  const until = performance.now() + periods * RENEW_MS;
  while (performance.now() < until) {
    const n = keySockets(emu).length;
    min = Math.min(min, n);
    max = Math.max(max, n);
    await sleep(20);
  }
  return { min, max };
}

/** The row id the intake gives an up_added (intake.ts). */
function rowId(user: string, at: number): string {
  return `${SERVER}:v3:up_added:${SERVER}:${user}:${at}`;
}

/** Every 'notification taken' line of the processes: what the intake did, over all of them. */
function outcomes(procs: readonly NodeChild[]): string[] {
  return procs.flatMap((p) =>
    p.entries().flatMap((e) => (e.msg === 'notification taken' ? [String(e.outcome)] : [])),
  );
}

describe.skipIf(!HAS_POSTGRES)('the notifications connection across processes on PostgreSQL', () => {
  it('one socket per key over renewals; after kill -9 another process takes over, and the gap is lost', async ({
    onTestFinished,
  }) => {
    let place: Place | undefined;
    let store: Store | undefined;
    let emu: Emulator | undefined;
    const procs: NodeChild[] = [];
    onTestFinished(async () => {
      for (const p of procs) p.kill('SIGKILL');
      await Promise.all(
        procs.map((p) => withTimeout(p.exited, 5_000, `${p.name} to exit`).catch(() => undefined)),
      );
      for (const p of procs) p.removeCwd();
      await store?.close();
      await emu?.close();
      await place?.remove();
    });
    place = await freshPlace('postgres');
    // Migrated once here, before the processes open it.
    store = await openStore(place.options);
    emu = await startEmulator({ rateLimits: false });
    const w = emu;
    const db = store;
    const rows = async (): Promise<string[]> =>
      (await db.run((k) => k.selectFrom('webhook_events').select('id').orderBy('id').execute())).map(
        (r) => r.id,
      );

    for (let i = 0; i < PROCESSES; i += 1) {
      procs.push(
        new NodeChild(`notify-${i}`, SCRIPT, {
          NOTIFY_URL: w.v3.notifyUrl,
          NOTIFY_KEY: V3_KEYS.staff,
          STORE_OPTIONS: JSON.stringify(place.options),
          HOST_ID: `host-${i}`,
          LEASE_MS: String(LEASE_MS),
          RENEW_EVERY_MS: String(RENEW_MS),
        }),
      );
    }
    await Promise.all(
      procs.map((p) => p.waitForLine((e) => e.msg === 'notify holder started', START_BOUND_MS, 'the start')),
    );
    await eventually(() => (keySockets(w).length > 0 ? true : undefined), CONNECT_MS, 'a socket for the key');

    // Several renew periods: one socket all along, held by one process.
    expect(await watchSockets(w, 6)).toEqual({ min: 1, max: 1 });
    const [first, ...others] = holders(procs);
    expect(others).toEqual([]);
    if (!first) throw new Error('no process holds the connection');

    // Each up given on the site: one row, taken by one process once.
    const t0 = Date.now() - 60_000;
    const before = [
      { user: IDS.prolificUser, at: t0 },
      { user: IDS.plainBotOwner, at: t0 + 1 },
      { user: IDS.otherProfileUser, at: t0 + 2 },
    ];
    for (const up of before) w.v3.upOnSite(SERVER, up.user, { at: up.at });
    const firstIds = before.map((up) => rowId(up.user, up.at)).sort();
    await eventually(
      async () => ((await rows()).length >= firstIds.length ? true : undefined),
      10_000,
      'the ups stored',
    );
    expect(await rows()).toEqual(firstIds);
    // The lines come a moment after the rows (the processes' output is read through a pipe).
    await eventually(() => (outcomes(procs).length >= 3 ? true : undefined), 5_000, 'the intake lines');
    expect(outcomes(procs)).toEqual(['stored', 'stored', 'stored']);
    expect(outcomes([first])).toHaveLength(3);

    // kill -9 the holder: its socket closes with it.
    const killedAt = Date.now();
    first.kill('SIGKILL');
    await withTimeout(first.exited, 5_000, 'the holder to die');
    await eventually(() => (keySockets(w).length === 0 ? true : undefined), 5_000, 'its socket to close');
    // Nobody is connected (the lease is not run out yet): the directory sends this up to no one.
    const gap = { user: IDS.prolificUser, at: t0 + 10 };
    expect(keySockets(w)).toEqual([]);
    w.v3.upOnSite(SERVER, gap.user, { at: gap.at });

    // Another process takes the lease once it runs out, and connects.
    await eventually(
      () => (keySockets(w).length > 0 ? true : undefined),
      LEASE_MS + RENEW_MS + CONNECT_MS,
      'another process to connect',
    );
    console.log(`notify-hosts: another process connected ${Date.now() - killedAt} ms after the kill`);
    const survivors = procs.filter((p) => p !== first);
    await eventually(
      () => (holders(survivors).length === 1 ? true : undefined),
      CONNECT_MS,
      'its ready state',
    );
    expect(await watchSockets(w, 6)).toEqual({ min: 1, max: 1 });
    const [second, ...more] = holders(survivors);
    expect(more).toEqual([]);
    if (!second) throw new Error('no process took over');

    const after = [
      { user: IDS.plainBotOwner, at: t0 + 20 },
      { user: IDS.otherProfileUser, at: t0 + 21 },
    ];
    for (const up of after) w.v3.upOnSite(SERVER, up.user, { at: up.at });
    const allIds = [...firstIds, ...after.map((up) => rowId(up.user, up.at))].sort();
    await eventually(
      async () => ((await rows()).length >= allIds.length ? true : undefined),
      10_000,
      'the ups after the takeover stored',
    );
    // The gap's up is not there: v3 does not replay it to the process that took over.
    expect(await rows()).toEqual(allIds);
    expect(await rows()).not.toContain(rowId(gap.user, gap.at));
    await eventually(() => (outcomes(procs).length >= 5 ? true : undefined), 5_000, 'the intake lines');
    expect(outcomes(procs)).toEqual(['stored', 'stored', 'stored', 'stored', 'stored']);
    expect(outcomes([second])).toEqual(['stored', 'stored']);
    // No process logged an error of its own.
    for (const p of procs) expect(p.stderr).toBe('');
  }, 60_000);
});

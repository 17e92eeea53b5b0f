/**
 * What the embedded store costs the bot: the time to open the SQLite store (a new file, with its
 * migrations, and an existing one), the time of one read, and the RSS it adds to a process that
 * has already loaded what the bot loads (discord.js, pino, undici), measured once the store is
 * open and has taken a burst of 200 ups and some settings (the bot opens it once, at start).
 * Each run is a fresh process
 * (`--expose-gc`, collected before each measure); the figures are the medians of the runs.
 *
 * The child's young generation is pinned at 16 MB a semi-space (`--min-semi-space-size` =
 * `--max-semi-space-size`): V8 grows it with the allocation rate (the burst of ups), and that
 * growth, up to 8 MB more RSS from one run to the next, is V8's, not what the store keeps.
 * Measured on 2026-11-27, five runs each: 13.8 to 14.6 MB added without the pin (11.3 to 15.2
 * over more runs, so the 15 MB budget failed now and then on the noise alone), 5.7 to 6.2 MB
 * with it; the heap added was 3.0 to 3.1 MB either way.
 *
 *   npm run build && node dist/bench/store-open.js [--runs 5] [--json]
 *
 * The issue's budget: at most 15 MB of RSS added by the embedded store.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { settle } from './lib/gc.js';
import { median } from './lib/stats.js';

export interface StoreOpenSample {
  importMs: number;
  openNewMs: number;
  openExistingMs: number;
  readMs: number;
  rssAddedMb: number;
  heapAddedMb: number;
}

const MB = 1024 * 1024;
/** The same young generation before and after (see above), so that its growth is not counted. */
const YOUNG_GENERATION_PINNED = ['--min-semi-space-size=16', '--max-semi-space-size=16'];

/** One sample, in this process (a fresh one). */
async function sample(): Promise<StoreOpenSample> {
  await Promise.all([import('discord.js'), import('pino'), import('undici')]);
  const before = await settle();
  const dir = mkdtempSync(join(tmpdir(), 'store-open-'));
  try {
    let t = performance.now();
    const store = await import('../src/store/index.js');
    const importMs = performance.now() - t;

    t = performance.now();
    const fresh = await store.openStore({ dataDir: dir });
    const openNewMs = performance.now() - t;
    // A burst of ups through the journal, and some settings and reminders: the store in use.
    const journal = new store.StoreUpJournal(fresh);
    const ids = Array.from({ length: 200 }, (_, i) => String(1_300_000_000_000_000_000n + BigInt(i)));
    const up = (id: string) => ({
      interactionId: id,
      token: `aW50ZXJhY3Rpb246${id}:${'x'.repeat(150)}`,
      applicationId: '1000000000000000001',
      guildId: id,
      channelId: id,
      channelName: 'general',
      userId: id,
      locale: 'en-US',
      guildLocale: 'en-US',
      createdAt: Date.now(),
    });
    await Promise.all(ids.map((id) => journal.add(up(id))));
    const settings = new store.SettingsRepository(fresh);
    const reminders = new store.ReminderRepository(fresh);
    for (const id of ids.slice(0, 50)) {
      await settings.update(id, { reminderChannelId: id, publicLanguage: 'ru' }, Date.now());
      await reminders.scheduleGuild(
        id,
        { dueAt: Date.now() + 3_600_000, nextUpAt: Date.now() + 3_600_000 },
        Date.now(),
      );
    }
    await Promise.all(ids.map((id) => journal.remove(id)));
    const after = await settle();
    await fresh.close();

    t = performance.now();
    const existing = await store.openStore({ dataDir: dir });
    const openExistingMs = performance.now() - t;
    // Timed after the memory is measured: a tight loop of reads grows V8's young generation
    // (up to 32 MB reserved), as any code allocating that fast would, which is not the store's.
    const reads = new store.SettingsRepository(existing);
    const first = ids[0] ?? '';
    for (let i = 0; i < 200; i++) await reads.get(first);
    t = performance.now();
    for (let i = 0; i < 1_000; i++) await reads.get(first);
    const readMs = (performance.now() - t) / 1_000;
    await existing.close();
    return {
      importMs,
      openNewMs,
      openExistingMs,
      readMs,
      rssAddedMb: (after.rss - before.rss) / MB,
      heapAddedMb: (after.heapUsed - before.heapUsed) / MB,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runChild(): Promise<StoreOpenSample> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...YOUNG_GENERATION_PINNED, '--expose-gc', fileURLToPath(import.meta.url), '--child'],
      { timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as StoreOpenSample);
      },
    );
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      json: { type: 'boolean' },
      child: { type: 'boolean' },
    },
  });
  if (values.child) {
    process.stdout.write(JSON.stringify(await sample()));
    return;
  }
  const samples: StoreOpenSample[] = [];
  for (let i = 0; i < Number(values.runs); i++) samples.push(await runChild());
  const of = (key: keyof StoreOpenSample) => median(samples.map((s) => s[key]));
  const medians: StoreOpenSample = {
    importMs: of('importMs'),
    openNewMs: of('openNewMs'),
    openExistingMs: of('openExistingMs'),
    readMs: of('readMs'),
    rssAddedMb: of('rssAddedMb'),
    heapAddedMb: of('heapAddedMb'),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ runs: samples.length, median: medians, samples })}\n`);
    return;
  }
  console.log(`SQLite store, median of ${samples.length} fresh processes (node ${process.version}):`);
  console.log(`  import of the store module     ${medians.importMs.toFixed(0)} ms`);
  console.log(`  open a new file (migrations)   ${medians.openNewMs.toFixed(1)} ms`);
  console.log(`  open an existing file          ${medians.openExistingMs.toFixed(1)} ms`);
  console.log(`  one settings read              ${medians.readMs.toFixed(3)} ms`);
  console.log(`  RSS added (budget 15 MB)       ${medians.rssAddedMb.toFixed(1)} MB`);
  console.log(`  heap added                     ${medians.heapAddedMb.toFixed(1)} MB`);
}

await main();

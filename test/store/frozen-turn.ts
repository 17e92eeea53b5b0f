/**
 * A process of the bot that takes a turn at the directory's shared limits and freezes in it: a
 * busy loop, so that, as under SIGSTOP, its connection stays open and never sends the turn's
 * next statement. It ends itself after 30 s whatever happens to the test or bench that made it.
 * Needs the build (`dist/src/store`).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { StoreOptions } from '../../src/store/index.js';
import { ROOT } from '../support/spawn.js';

const SCRIPT = `
  const { writeSync } = await import('node:fs');
  const { openStore, PostgresRateLimitLedger } = await import(process.argv[1]);
  const ledger = new PostgresRateLimitLedger(await openStore(JSON.parse(process.argv[2])));
  const me = { id: 'frozen', priority: 'background', buckets: ['global'], expiresInMs: 60000 };
  await ledger.turn(me, 60000, () => {
    writeSync(1, 'holding\\n');
    for (const end = Date.now() + 30000; Date.now() < end; ) {}
    process.exit(1);
  });`;

/** Resolves once the child holds the turn's lock; kill it (SIGKILL) to let it go at once. */
export async function holdTurnFrozen(
  options: StoreOptions,
): Promise<ChildProcessByStdio<null, Readable, null>> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      SCRIPT,
      pathToFileURL(join(ROOT, 'dist/src/store/index.js')).href,
      JSON.stringify(options),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('holding')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the process holding the turn exited (${code})`)));
  });
  return child;
}

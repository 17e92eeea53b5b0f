/**
 * What a kill test (reminder-kill, posts-kill, webhook-kill) needs of its own: a world (the stand-ins and a fresh
 * store on the engine), the test's own connection to the bot's store, and built bots started as
 * children with a short claim lease; all of it closed, and every child killed, when the test ends.
 */
import type { onTestFinished } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import type { Engine } from '../../src/store/store.js';
import { childEnv, startWorld, type World, type WorldOptions } from '../faults/fixtures.js';
import { startBot } from '../faults/helpers.js';
import type { BotProcess } from '../support/bot-process.js';
import { withTimeout } from '../support/wait.js';

/** A claim runs out this soon: a killed process's work is taken over quickly. */
export const CLAIM_MS = 1_500;

export function killScope(engine: Engine, finished: typeof onTestFinished) {
  let world: World | undefined;
  let store: Store | undefined;
  const procs: BotProcess[] = [];
  finished(async () => {
    for (const p of procs.splice(0)) p.kill('SIGKILL');
    await store?.close();
    await world?.close();
  });
  return {
    async open(options: WorldOptions = {}): Promise<{ world: World; store: Store }> {
      world = await startWorld(engine, options);
      store = await openStore(world.store.options);
      return { world, store };
    },
    /** A built bot on the world, with the short claim lease and `env` besides. */
    start(name: string, w: World, env: Record<string, string> = {}): BotProcess {
      const proc = startBot(name, { ...childEnv(w), REMINDER_CLAIM_MS: String(CLAIM_MS), ...env });
      procs.push(proc);
      return proc;
    },
    async killed(proc: BotProcess): Promise<void> {
      proc.kill('SIGKILL');
      await withTimeout(proc.exited, 5_000, 'the bot to die');
    },
  };
}

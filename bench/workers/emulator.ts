/**
 * The directory emulator in a process of its own (scenario 2), driven over IPC by
 * bench/lib/bot.ts, with its request log kept so the bench can read what the ups carried.
 */
import { type Emulator, type EmulatorOptions, startEmulator } from '../../test/emulator/index.js';
import { serveRpc } from '../lib/ipc.js';
import { serverPosts } from '../lib/records.js';

/** The options that cross a process boundary (no clock, no log callback). */
export type EmulatorChildOptions = Omit<EmulatorOptions, 'now' | 'log'>;

let emulator: Emulator | undefined;

function running(): Emulator {
  if (!emulator) throw new Error('the emulator is not started');
  return emulator;
}

serveRpc({
  async start(options: EmulatorChildOptions): Promise<string> {
    emulator = await startEmulator(options);
    return emulator.url;
  },
  /** How many requests it has received: a mark to count from. */
  requestCount(): number {
    return running().requests.length;
  },
  /** `METHOD /path` of each request from the `from`th on. */
  requestPaths(from: number): string[] {
    return running()
      .requests.slice(from)
      .map((r) => `${r.method} ${r.path}`);
  },
  serverPosts(from: number): { posts: number; withoutStats: number } {
    return serverPosts(running().requests, from);
  },
  async close(): Promise<void> {
    await emulator?.close();
    emulator = undefined;
  },
});

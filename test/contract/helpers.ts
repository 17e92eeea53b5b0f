import { DirectoryClient, type DirectoryClientOptions } from '../../src/directory/client.js';
import type { Emulator } from '../emulator/index.js';

/** A client pointed at the emulator; rate limiting off unless asked for (the emulator's is off too). */
export function clientFor(emu: Emulator, options: DirectoryClientOptions = {}): DirectoryClient {
  return new DirectoryClient({
    baseUrl: emu.url,
    version: 'v2',
    rateLimits: false,
    timeoutMs: 2_000,
    maxRetries: 2,
    random: () => 0, // shortest backoff: tests stay fast and deterministic
    ...options,
  });
}

/** Requests that reached the emulator, without the version prefix. */
export function paths(emu: Emulator): string[] {
  return emu.requests.map((r) => `${r.method} ${r.path}`);
}

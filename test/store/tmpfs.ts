/**
 * A small filesystem of the test's own (a tmpfs, which needs root, as in CI's container), and a
 * filler that takes it to its last byte: a disk that fills while the bot runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

/** Mounts a tmpfs of `size` (e.g. '4m') on `dir`; false, said once, where mount is refused. */
export function mountTmpfs(dir: string, size: string, what: string): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return true;
  } catch (err) {
    console.log(`${what}: mount of a tmpfs refused (${String(err).split('\n')[0]}): skipped`);
    return false;
  }
}

export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir]);
}

/** Fills the filesystem holding `filler`: the file grows until the disk refuses a byte more. */
export function fillDisk(filler: string): void {
  const chunk = Buffer.alloc(16 * 1024, 7);
  let data = Buffer.alloc(0);
  for (;;) {
    try {
      data = Buffer.concat([data, chunk]);
      writeFileSync(filler, data);
    } catch {
      // ENOSPC: what was written is kept up to the last byte the disk took.
      return;
    }
  }
}

/**
 * The npm scripts a user runs start the built files at once: no compiler run each time (`npm ci`
 * builds; after changing the source, `npm run build`).
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../ops/helpers.js';

/** Written by every build: a compiler run would change its time. */
const BUILT = join(ROOT, 'dist/src/config/env.js');

function npmRun(script: string): Promise<{ code: number | null; stderr: string }> {
  // LOG_LEVEL from the environment wins over any .env in the checkout: each entry point stops at
  // its configuration, before it connects anywhere.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? ROOT,
    LOG_LEVEL: 'loud',
  };
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

describe('npm scripts', () => {
  it.each(['start', 'start:sharded', 'deploy-commands'])(
    'npm run %s runs dist/ as built, without compiling',
    async (script) => {
      const before = statSync(BUILT).mtimeMs;
      const result = await npmRun(script);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('LOG_LEVEL: expected one of');
      expect(statSync(BUILT).mtimeMs).toBe(before);
    },
    30_000,
  );
});

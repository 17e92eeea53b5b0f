/** A wait for a child's line that does not come fails, and says what the child last wrote. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeChild } from './child.js';
import { tempDir } from './temp.js';
import { START_BOUND_MS } from './wait.js';

const dir = tempDir('child-test-');
afterAll(() => dir.remove());

describe('NodeChild.waitForLine', () => {
  it("names what it waited for and the child's last lines, on a timeout and on an exit", async () => {
    const script = join(dir.path, 'slow.mjs');
    writeFileSync(
      script,
      `console.log(JSON.stringify({ level: 30, msg: 'still connecting' }));\n` +
        `setInterval(() => undefined, 1_000);\n`,
    );
    const child = new NodeChild('slow', script, {});
    try {
      await child.waitForLine((e) => e.msg === 'still connecting', START_BOUND_MS, 'its first line');
      await expect(child.waitForLine((e) => e.msg === 'listening', 100, 'the port')).rejects.toThrow(
        /timed out after 100 ms waiting for slow \(pid \d+\): the port; its last lines: .*still connecting/,
      );
      const waiting = child.waitForLine((e) => e.msg === 'listening', START_BOUND_MS, 'the port');
      child.kill('SIGTERM');
      await expect(waiting).rejects.toThrow(
        /slow \(pid \d+\) exited \(SIGTERM\) before the port: .*still connecting/,
      );
    } finally {
      child.kill('SIGKILL');
      await child.exited;
      child.removeCwd();
    }
  });
});

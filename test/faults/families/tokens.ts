/** T rows: what the token scan of every other row found. */
import { tokenScan } from '../fixtures.js';
import { Checks } from '../helpers.js';
import { type Family, type Row, TEST_BOUND_MS } from '../runner.js';

const tokenRow: Row = {
  id: 'T1',
  fault: 'tokens in logs, output, replies, errors',
  expected: 'DISCORD_TOKEN / DIRECTORY_TOKEN values nowhere',
  timeoutMs: TEST_BOUND_MS,
  run: async () => {
    const c = new Checks();
    c.none(tokenScan.leaks, 'token leaks');
    c.that(tokenScan.logLines > 0 && tokenScan.childLines > 0, 'nothing was scanned');
    return {
      observed:
        `${tokenScan.leaks.length} leaks in ${tokenScan.logLines} log lines, ` +
        `${tokenScan.childLines} child lines, ` +
        `${tokenScan.discordBodies} requests to Discord`,
      problems: c.problems,
    };
  },
};

export const tokenLeaks: Family = {
  title: 'every row',
  stage: 'last',
  rows: [tokenRow],
};

/** F rows: a thousand hostile references, all answered, none reaching an unintended route. */
import { LEVEL, type LogEntry, liveMessages, optionString } from '../../e2e/harness.js';
import { percentile } from '../../support/stats.js';
import { freshGuild, inHarness, newUserRef } from '../fixtures.js';
import { message } from '../helpers.js';
import { hostileInputs } from '../hostile-inputs.js';
import type { Family, Row } from '../runner.js';

const FUZZ_SEED = 0x5eed_f417;
const FUZZ_COUNT = 1_000;
const FUZZ_BATCH = 50;
const ALLOWED_ROUTE = /^\/v2\/(bot|server)\/([^/?#]+)$/;
const SNOWFLAKE = /^\d{17,20}$/;
const SHORT_CODE = /^[A-Za-z0-9_-]{1,32}$/;

const fuzzRow: Row = {
  id: 'F1',
  fault: `${FUZZ_COUNT} hostile /bot and /server refs (seed ${FUZZ_SEED.toString(16)})`,
  expected: 'all answered, only intended routes, no ping, no crash',
  timeoutMs: 60_000,
  run: () =>
    inHarness({}, async (h, c) => {
      const inputs = hostileInputs(FUZZ_SEED, FUZZ_COUNT);
      const outcomes = new Map<string, number>();
      const deferrals: number[] = [];
      const unanswered: string[] = [];
      for (let i = 0; i < inputs.length; i += FUZZ_BATCH) {
        const batch = inputs.slice(i, i + FUZZ_BATCH).map((value, j) => {
          const name = (i + j) % 2 === 0 ? 'bot' : 'server';
          const pending = h.send(
            { guildId: freshGuild.id, name, user: newUserRef('fuzz'), options: [optionString('ref', value)] },
            20_000,
          );
          return { value, name, pending };
        });
        const settled = await Promise.allSettled(batch.map((b) => b.pending.done));
        settled.forEach((s, j) => {
          const sent = batch[j];
          if (!sent) return;
          const label = `/${sent.name} ${JSON.stringify(sent.value.slice(0, 40))}`;
          if (s.status === 'rejected') {
            unanswered.push(`${label}: ${message(s.reason)}`);
            return;
          }
          const answer = s.value;
          outcomes.set(answer.outcome, (outcomes.get(answer.outcome) ?? 0) + 1);
          const first = answer.requests.find((r) => r.method === 'POST' && /\/callback$/.test(r.path));
          if (first) deferrals.push(first.at - answer.handle.sentAt);
          if (liveMessages(answer.view).length !== 1)
            unanswered.push(`${label}: ${JSON.stringify(answer.view)}`);
        });
      }
      c.none(unanswered, 'not answered');
      const expectedOutcomes = new Set(['shown', 'error:InvalidInput', 'error:NotFound']);
      c.none(
        [...outcomes.keys()].filter((o) => !expectedOutcomes.has(o)),
        'unexpected outcomes',
      );
      const stray = h.emu.requests.filter((r) => {
        const m = ALLOWED_ROUTE.exec(r.path);
        const ref = m?.[2] ?? '';
        return r.method !== 'GET' || !m || !(SNOWFLAKE.test(ref) || SHORT_CODE.test(ref));
      });
      c.none(
        stray.map((r) => `${r.method} ${r.path.slice(0, 80)}`),
        'requests to unintended routes',
      );
      const late = deferrals.filter((d) => d >= 3_000).length;
      c.equal(late, 0, 'deferrals at or after 3 s');
      const errors = h.entries().filter((e: LogEntry) => e.level >= LEVEL.error);
      c.none(
        errors.map((e) => String(e.msg)),
        'error lines',
      );
      // Still alive: an ordinary look-up after the storm.
      const after = await h.run(
        { guildId: freshGuild.id, name: 'bot', options: [optionString('ref', 'kerdoku')] },
        10_000,
      );
      c.equal(after.outcome, 'shown', '/bot after the storm');
      const counts = [...outcomes.entries()].map(([o, n]) => `${o} ${n}`).join(', ');
      const long = inputs.filter((v) => v.length >= 6_000).length;
      const p95 = Math.round(percentile(deferrals, 95));
      const max = Math.round(Math.max(...deferrals));
      return (
        `${FUZZ_COUNT - unanswered.length}/${FUZZ_COUNT} answered ` +
        `(${counts}; ${long} inputs ≥ 6000 chars); ` +
        `${h.emu.requests.length} directory requests, ${stray.length} stray; deferral p95 ${p95} ms, ` +
        `max ${max} ms; /bot after: ${after.outcome}`
      );
    }),
};

/**
 * Long but mostly waiting (discord.js keeps the bot under Discord's 50 requests per second,
 * interaction answers included), so it runs alongside every other row.
 */
export const hostileInput: Family = {
  title: 'hostile input',
  stage: 'alongside',
  rows: [fuzzRow],
};

/**
 * Deferral latency: from the stand-in dispatching an interaction (handle.sentAt) to the bot's
 * deferral reaching it (firstResponse().at), over 200 interactions in sequential batches of 20
 * concurrent. Printed, not tightly asserted: only Discord's own 3 s limit (with a margin) is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGuild } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, optionString, percentile, startHarness } from './harness.js';

const INTERACTIONS = 200;
const BATCH = 20;
const guild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [guild] });
});
afterAll(async () => {
  await h?.close();
});

describe('deferral latency', () => {
  it(`${INTERACTIONS} interactions are all deferred well inside 3 s and all answered`, async () => {
    const latencies: number[] = [];
    const answered: number[] = [];
    const outcomes: string[] = [];
    const refs = ['boticord', IDS.serverCooldown, 'kerdoku'];
    for (let sent = 0; sent < INTERACTIONS; sent += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, INTERACTIONS - sent) }, (_, i) => {
        const n = sent + i;
        const command = n % 3 === 2 ? 'bot' : 'server';
        return h.send({
          guildId: guild.id,
          name: command,
          options: [optionString('ref', refs[n % 3] ?? '')],
        });
      });
      await Promise.all(
        batch.map(async ({ handle, done }) => {
          const first = await handle.firstResponse();
          expect(first.type).toBe(5);
          latencies.push(first.at - handle.sentAt);
          const answer = await done;
          outcomes.push(answer.outcome);
          const last = answer.requests.at(-1);
          if (last) answered.push(last.at - handle.sentAt);
        }),
      );
    }
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(
      `deferral latency over ${latencies.length} interactions: ` +
        `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    );
    // The final answers are paced by discord.js's own global limit (50 requests/s), which it also
    // applies to interaction webhooks; printed for information only.
    console.log(
      `final answer over ${answered.length} interactions: p50 ${percentile(answered, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(answered, 99).toFixed(1)} ms`,
    );
    expect(latencies).toHaveLength(INTERACTIONS);
    expect(outcomes.filter((o) => o !== 'shown')).toEqual([]);
    expect(p99).toBeLessThan(2_500);
  });
});

itLeavesNoTrace(() => h);

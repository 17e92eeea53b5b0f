/**
 * Scenario 11: autocomplete of /bot's `ref` (issue 24). USERS people type at once, KEYSTROKES
 * keystrokes each, a user's next keystroke once the one before is answered and the typing pace
 * is kept (one keystroke per TYPING_MS), through the real bot to the Discord stand-in (in a child
 * process, its relay timing each answer as it arrives) and the directory emulator. Before they
 * type, /bot has looked up a few bots in the server, so the suggestions have something to show.
 * It reports the answer's p50 and p99 at the relay (target p99 ≤ 100 ms) and the directory
 * requests the typing caused (target: at most one per user, the background look-up of their
 * own bots, never one per keystroke).
 */
import { makeGuilds, snowflake } from '../../test/discord/index.js';
import { startIsolatedBotRig } from '../lib/bot.js';
import { size } from '../lib/env.js';
import { atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { sleep, summarize } from '../lib/stats.js';

const SCENARIO = '11. Autocomplete';
const TYPING_MS = 120;
/** What each user types, one character more per keystroke. */
const TEXT = 'kerdoku-bot';

export async function autocompleteScenario(): Promise<ScenarioResult> {
  const users = size(50, 10);
  const keystrokes = size(TEXT.length, 4);
  const guilds = makeGuilds(1);
  const guildId = guilds[0]?.id ?? '';
  const rig = await startIsolatedBotRig({ guilds, emulator: {}, env: {} });
  const times: number[] = [];
  let unanswered = 0;
  let paths: string[] = [];
  let discordTooMany = Number.NaN;
  try {
    // The server's recent look-ups: what the suggestions show of this place.
    const looked = await rig.lookUp(guildId, 'kerdoku', 30_000);
    if (looked.outcome !== 'shown') throw new Error(`/bot kerdoku: ${looked.outcome}`);
    const typists = Array.from({ length: users }, () => snowflake());
    const mark = await rig.directoryRequests();
    for (let k = 1; k <= keystrokes; k++) {
      const started = performance.now();
      const batch = typists.map((userId) => ({
        key: `${userId}:${k}`,
        guildId,
        userId,
        text: TEXT.slice(0, k),
      }));
      await rig.type(batch);
      const answered = await rig.timings(batch.map((b) => b.key));
      for (const t of answered) {
        if (t.firstMs === undefined) unanswered++;
        else times.push(t.firstMs);
      }
      const left = TYPING_MS - (performance.now() - started);
      if (left > 0) await sleep(left);
    }
    paths = await rig.directoryRequestPaths(mark);
    discordTooMany = await rig.discordTooMany();
  } finally {
    await rig.close();
  }
  const answer = summarize(times);
  const perUser = paths.length / users;
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      metric: `answer p50 (${users} users typing at once, ${keystrokes} keystrokes each)`,
      unit: 'ms',
      ours: answer.p50,
      verdict: 'info',
      note: 'from the stand-in writing the keystroke to the answer (callback type 8) reaching its relay',
    },
    {
      scenario: SCENARIO,
      metric: 'answer p99',
      unit: 'ms',
      ours: answer.p99,
      target: '≤ 100 ms',
      verdict: unanswered > 0 ? 'FAIL' : atMost(answer.p99, 100),
      note: `max ${answer.max.toFixed(1)} ms over ${times.length}; ${unanswered} unanswered`,
    },
    {
      scenario: SCENARIO,
      metric: 'directory requests per user while typing',
      unit: '',
      ours: perUser,
      target: '≤ 1',
      verdict: atMost(perUser, 1),
      note: `${paths.length} requests for ${users * keystrokes} keystrokes: ${[...new Set(paths.map((p) => p.replace(/\d{17,20}/, ':id')))].join(', ') || 'none'}`,
    },
    discordTooManyRow(SCENARIO, discordTooMany),
  ];
  return { rows, data: { users, keystrokes, answerMs: answer, directoryRequests: paths.length, unanswered } };
}

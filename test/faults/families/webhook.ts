/** W rows: Discord answers the interaction webhook with a 429; discord.js waits and the answer arrives. */
import { ORIGINAL_PATH } from '../../discord/index.js';
import { firstEmbed, inHarness, lookUpKerdoku } from '../fixtures.js';
import type { Family, Row } from '../runner.js';

const webhookRow: Row = {
  id: 'W1',
  fault: 'Discord: 429 on PATCH @original',
  expected: 'discord.js waits and retries; the card arrives',
  timeoutMs: 20_000,
  run: () =>
    inHarness({}, async (h, c) => {
      h.discord.injectRestFault({
        method: 'PATCH',
        path: ORIGINAL_PATH,
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: 0.75, global: false, code: 0 },
        headers: {
          'retry-after': '1',
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': '0.750',
          'x-ratelimit-bucket': 'faults-webhook',
          'x-ratelimit-scope': 'user',
        },
        times: 1,
      });
      const answer = await lookUpKerdoku(h, 15_000);
      const patches = answer.requests.filter((r) => r.method === 'PATCH' && ORIGINAL_PATH.test(r.path));
      c.equal(
        patches.map((r) => r.status),
        [429, 200],
        'PATCH @original statuses',
      );
      c.equal(answer.outcome, 'shown', 'outcome');
      c.equal(firstEmbed(answer.view.original)?.title, 'Bot kerdoku', 'the card');
      c.that(answer.view.original?.deleted !== true, 'the card was deleted');
      const [first, second] = patches;
      const waited = first && second ? Math.round(second.at - first.at) : -1;
      c.that(waited >= 500, `retried after ${waited} ms, before the 429's wait`);
      const statuses = patches.map((r) => r.status).join(' → ');
      return `PATCH ${statuses}, retried after ${waited} ms; ${answer.outcome}`;
    }),
};

export const webhookFaults: Family = {
  title: 'a 429 on the interaction webhook',
  stage: 1,
  rows: [webhookRow],
};

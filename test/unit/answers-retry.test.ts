/**
 * An interaction answer Discord fails (5xx, or not reached, after @discordjs/rest's own retries) is
 * tried again within its token's life (src/gateway/answers-rest.ts); a 4xx ends it at once; the
 * bot stopping ends the waits. The end-to-end run is test/e2e/discord-outage.test.ts.
 */
import { REST, type RESTOptions } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { ANSWER_RETRY_FIRST_MS, sendAnswersApart } from '../../src/gateway/answers-rest.js';

const EDIT = '/webhooks/111/the-token/messages/@original' as const;

/** A REST whose every request is answered by `answer` in turn, counting the tries. */
function rig(answers: number[]) {
  let tries = 0;
  const makeRequest: RESTOptions['makeRequest'] = async () => {
    const status = answers[Math.min(tries, answers.length - 1)]!;
    tries += 1;
    const body = status === 200 ? '{"id":"1"}' : '{"message":"nope","code":0}';
    return new Response(body, { status, headers: { 'content-type': 'application/json' } }) as never;
  };
  // No retries of its own: each try here is one of answers-rest.ts's.
  const options: Partial<RESTOptions> = { api: 'http://127.0.0.1:9/api', makeRequest, retries: 0 };
  const rest = new REST(options).setToken('not-a-real-token');
  const apart = sendAnswersApart(rest, options, () => '111');
  return { rest, apart, tries: () => tries };
}

describe('interaction answers tried again within their token', () => {
  it('500 twice, then Discord answers: the edit lands on the third try, 1 s then 2 s later', async () => {
    const r = rig([500, 500, 200]);
    const started = performance.now();
    await expect(r.rest.patch(EDIT, { auth: false, body: {} })).resolves.toEqual({ id: '1' });
    expect(r.tries()).toBe(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(ANSWER_RETRY_FIRST_MS * 3 - 50);
  }, 10_000);

  it('a 4xx (an expired token) is Discord answering: not tried again', async () => {
    const r = rig([404]);
    await expect(r.rest.patch(EDIT, { auth: false, body: {} })).rejects.toMatchObject({ status: 404 });
    expect(r.tries()).toBe(1);
  });

  it('a request that is not an answer is not tried again', async () => {
    const r = rig([500, 200]);
    await expect(r.rest.post('/channels/1/messages', { body: {} })).rejects.toMatchObject({ status: 500 });
    expect(r.tries()).toBe(1);
  });

  it('closing (the bot stopping) ends a wait at once, with the failure', async () => {
    const r = rig([500]);
    const answer = r.rest.patch(EDIT, { auth: false, body: {} });
    answer.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closedAt = performance.now();
    r.apart.close();
    await expect(answer).rejects.toMatchObject({ status: 500 });
    expect(performance.now() - closedAt).toBeLessThan(500);
    expect(r.tries()).toBe(1);
  });
});

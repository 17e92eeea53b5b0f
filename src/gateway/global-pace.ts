/**
 * Discord's global limit (50 requests a second per bot token), kept by whatever REST sends with
 * the bot's token: the bot's own client when it runs alone (client.ts), and the REST proxy that
 * several hosts share (rest-proxy.ts).
 *
 * @discordjs/rest's own global limit is not enough for a sender that runs at it: its window
 * starts when a request leaves, and the next one as soon as it is over, so the last requests of
 * one window and the first of the next can reach Discord less than a second apart, by as much as
 * they were delayed on the way (an event loop busy, a body still coming in). Three hosts at 150 a
 * second through the proxy got 3 to 33 × 429 of 300 from the stand-in counting 50 a second
 * (test/ops/rest-proxy.test.ts); one bot posting 100 reminders and then editing them got 1 to 3
 * (bench scenario 13). So every request first takes a slot of the project's own limiter (the
 * directory client's RateLimiter: a sliding log of 50 in any second, each slot counted until the
 * answer came), which no Discord window, wherever it starts, can find more than 50 in;
 * @discordjs/rest's own limit stays behind it as a second guard, and its per-route buckets as
 * they are. A request over the limit waits.
 */
import type { InternalRequest, REST } from '@discordjs/rest';
import { RateLimiter } from '../directory/rate-limiter.js';

/**
 * Discord's global limit for a bot token, requests a second (as @discordjs/rest's default); a
 * large bot's is raised by Discord on request: DISCORD_GLOBAL_RATE_LIMIT, which the bot's REST,
 * this pace and the REST proxy all follow.
 */
export const DISCORD_GLOBAL_REQUESTS_PER_SECOND = 50;

/**
 * Added to each slot's second. A slot is counted from when its answer was read, which is after
 * Discord counted the request (on its arrival), so no margin is needed for the latency; this one
 * covers the clock's and the timers' millisecond rounding. The directory client's 25 ms default
 * cost 2.5 % of a second here: draining a backlog of 5,000 reminders at 0.952 of the limit
 * (bench scenario 18), where each slot's second plus the request's own time is the floor.
 */
const MARGIN_MS = 5;

/**
 * Every request of `rest` takes a slot of a sliding log of `perSecond` in any second first. Wraps
 * `queueRequest`, where every request of @discordjs/rest and discord.js ends (as answers-rest.ts
 * does): what wraps it afterwards (the interaction answers, sent apart) is not paced. `rest`'s own
 * `globalRequestsPerSecond` must be as high, or it holds the requests to its own.
 */
export function paceGlobally(rest: REST, perSecond = DISCORD_GLOBAL_REQUESTS_PER_SECOND): void {
  const limiter = new RateLimiter({
    global: { max: perSecond, windowMs: 1_000 },
    // No bucket of its own is asked for: Discord's per-route limits are @discordjs/rest's.
    routes: { max: perSecond, windowMs: 1_000 },
    marginMs: MARGIN_MS,
  });
  const queue = rest.queueRequest.bind(rest);
  rest.queueRequest = async (request: InternalRequest) => {
    const grant = await limiter.acquire();
    try {
      return await queue(request);
    } finally {
      grant.settle();
    }
  };
}

/**
 * What the bench reads from the stand-ins' records, in whichever process they run: the times of
 * an interaction's first response and final answer (Discord stand-in) and the ups the directory
 * received with and without the guild's statistics (emulator).
 */
import { isFinalAnswer } from '../../test/discord/answers.js';
import type { InteractionHandle } from '../../test/discord/index.js';
import type { RecordedRequest } from '../../test/emulator/index.js';

export interface UpTimings {
  /**
   * Deferral as Discord saw it, ms after dispatch: when the callback reached the stand-in's relay
   * (test/discord/relay.ts) where there is one, else when the stand-in read it; undefined when none
   * was accepted.
   */
  firstMs: number | undefined;
  /** Deferral as the stand-in's own event loop read it, ms after dispatch. */
  firstReadMs: number | undefined;
  /** The final edit of @original or the follow-up, ms after dispatch; undefined when none came. */
  finalMs: number | undefined;
}

/**
 * The times on the stand-in's clock, from its dispatch to its receipt of the request.
 * `relayedAt`: when the callback reached the relay (performance.timeOrigin + performance.now()).
 */
export function upTimings(handle: InteractionHandle, relayedAt?: number): UpTimings {
  const requests = handle.requests();
  const first = requests.find((r) => r.path.endsWith('/callback') && r.status < 300);
  const final = requests.find(isFinalAnswer);
  const firstReadMs = first ? first.at - handle.sentAt : undefined;
  return {
    firstMs:
      first && relayedAt !== undefined ? relayedAt - (performance.timeOrigin + handle.sentAt) : firstReadMs,
    firstReadMs,
    finalMs: final ? final.at - handle.sentAt : undefined,
  };
}

/**
 * POST /server requests the directory received, and how many went without the guild's statistics:
 * its name, member count or owner (the online count and the owner's name may follow on a later up).
 */
export function serverPosts(
  requests: readonly RecordedRequest[],
  from = 0,
): { posts: number; withoutStats: number } {
  const posts = requests.slice(from).filter((r) => r.method === 'POST' && /^\/v[12]\/server$/.test(r.path));
  let withoutStats = 0;
  for (const post of posts) {
    try {
      const body = JSON.parse(post.body) as Record<string, unknown>;
      if (
        body.serverName === undefined ||
        body.serverMembersAllCount === undefined ||
        body.serverOwnerID === undefined
      )
        withoutStats++;
    } catch {
      withoutStats++;
    }
  }
  return { posts: posts.length, withoutStats };
}

/**
 * When a server's digest is posted: at the end of its period (`/settings digest period:`) in its
 * time zone, plus a share of DIGEST_SPREAD_MS fixed by the server's id. 10,000 servers whose
 * periods end at one boundary (Monday 00:00 UTC) are then spread over five minutes rather than
 * sent at once: the store's looks, the charts drawn and Discord's global limit (50 requests a
 * second, paced by gateway/global-pace.ts) all take them in turn. planDigest writes a server's plan
 * as its settings now say (/settings digest, timezone: ServerPosts.planDigest).
 */
import { createHash } from 'node:crypto';
import type { DigestPlan, DigestRepository } from '../../store/digests.js';
import type { DigestPeriod } from '../../store/schema.js';
import type { GuildSettings } from '../../store/settings.js';
import { periodAt } from '../history/calendar.js';

export const DIGEST_SPREAD_MS = 5 * 60_000;

/** The server's share of the spread: the same for every period, different between servers. */
export function spreadOf(guildId: string, spreadMs = DIGEST_SPREAD_MS): number {
  return createHash('sha256').update(guildId).digest().readUInt32BE(0) % spreadMs;
}

/** The digest of the server's period that holds `at`. */
export function digestPlan(
  guildId: string,
  digest: { channelId: string; period: DigestPeriod },
  timeZone: string,
  at: number,
): DigestPlan {
  const span = periodAt(digest.period, at, timeZone);
  return {
    guildId,
    channelId: digest.channelId,
    period: digest.period,
    key: span.key,
    start: span.start,
    end: span.end,
    timeZone,
    dueAt: span.end + spreadOf(guildId),
  };
}

/** The server's digest as its settings now say (the period holding now), written and woken. */
export async function planDigest(
  posts: { digests: Pick<DigestRepository, 'cancel' | 'schedule'>; wakeDigests(dueAt: number): void },
  settings: GuildSettings,
  now: number,
): Promise<number | undefined> {
  if (!settings.digest) {
    await posts.digests.cancel(settings.guildId);
    return undefined;
  }
  const plan = digestPlan(settings.guildId, settings.digest, settings.timeZone ?? 'UTC', now);
  await posts.digests.cancel(settings.guildId, plan.key);
  await posts.digests.schedule(plan);
  posts.wakeDigests(plan.dueAt);
  return plan.dueAt;
}

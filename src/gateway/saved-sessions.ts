/**
 * The sessions saved in the store, read back: which may be resumed, and as what. Read by the
 * entry point before the bot's modules load, to resume at once (early-resume.ts), and by the
 * sessions' keeper as the shards start (gateway-sessions.ts): one reading, so that both always
 * agree on which shards resume. Nothing here loads discord.js.
 */
import type { SessionInfo } from '@discordjs/ws';
import type { GatewaySessionRepository, GatewaySnapshot } from '../store/index.js';

/**
 * Discord does not say how long a dropped session stays resumable ("a few minutes" in practice):
 * past this, a restart identifies rather than restore guilds that may be stale and try a RESUME
 * that would be refused.
 */
export const SESSION_RESTORE_MAX_AGE_MS = 180_000;

export type Payload = Record<string | symbol, unknown>;

export function isPayload(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null;
}

export function parsed(text: string): Payload | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isPayload(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A saved session that can be resumed, with what READY said of the bot. */
export interface Resumable {
  session: SessionInfo;
  identity: Payload & { user: Payload & { id: string } };
}

/** The snapshot's session, or undefined when what READY said of the bot is unreadable (the shard identifies). */
export function resumable(
  shardId: number,
  shardCount: number,
  saved: GatewaySnapshot,
): Resumable | undefined {
  const identity = parsed(saved.session.identity);
  if (!identity || !isPayload(identity.user) || typeof identity.user.id !== 'string') return undefined;
  return {
    session: {
      sessionId: saved.session.sessionId,
      sequence: saved.session.sequence,
      resumeURL: saved.session.resumeUrl,
      shardId,
      shardCount,
    },
    identity: identity as Resumable['identity'],
  };
}

/** The saved sessions of these shards young enough to resume (`maxAgeMs`), with their guilds. */
export function loadSaved(
  repository: Pick<GatewaySessionRepository, 'load'>,
  shards: { shardIds: readonly number[]; shardCount: number },
  now: number,
  maxAgeMs = SESSION_RESTORE_MAX_AGE_MS,
): Promise<Map<number, GatewaySnapshot>> {
  return repository.load(shards.shardIds, shards.shardCount, maxAgeMs, now);
}

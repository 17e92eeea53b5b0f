/**
 * The first response to an interaction (its deferral), sent from the gateway packet itself,
 * before discord.js has built the interaction, on connections of its own.
 *
 * Why not discord.js's deferReply: measured under a burst (bench scenario 2, 200 interactions at
 * once), a deferral through discord.js waited for discord.js to build every interaction that
 * arrived with it, then in @discordjs/rest's queue, then for one of the REST connections that the
 * guild lookups and final edits also use. The deferral is one small POST with the interaction's
 * own token: no bucket, no bot token, not under the global rate limit (Discord exempts
 * interaction callbacks), so it needs none of that machinery. This sends it at once, and the
 * router marks the interaction deferred when it has gone through (`markDeferred`), so that
 * discord.js's editReply and followUp work on it as after deferReply.
 *
 * What @discordjs/rest would have done for a deferral, this does too: a 429 is waited out and the
 * callback sent again (within the 3 s Discord allows for the first response), and an error is a
 * `DiscordAPIError`-like one with Discord's status and code. A retry that Discord answers with
 * "already acknowledged" (40060) means an earlier attempt went through.
 */
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  InteractionResponseType,
  MessageFlags,
} from 'discord.js';
import { type Dispatcher, Pool } from 'undici';
import { retryAfterFromHeaders } from '../directory/transport.js';

/** What to send: a deferred reply (public or private), or a deferred update of a button's message. */
export type Deferral =
  | { type: InteractionResponseType.DeferredChannelMessageWithSource; ephemeral: boolean }
  | { type: InteractionResponseType.DeferredMessageUpdate };

export interface AcknowledgerOptions {
  /** Discord's API root, as discord.js has it (`client.rest.options.api`), e.g. https://discord.com/api. */
  api: string;
  /** API version, as discord.js has it (`client.rest.options.version`). */
  version: string;
  userAgent: string;
  /** Connections of their own; default DEFERRAL_CONNECTIONS. */
  connections?: number;
  now?: () => number;
}

/**
 * Sized for a burst: 200 interactions at once were answered fastest with 64 connections (32 left
 * deferrals waiting for one, more cost more handshakes than they saved). Each is kept 60 s idle.
 */
export const DEFERRAL_CONNECTIONS = 64;
const KEEP_ALIVE_MS = 60_000;
/** Discord allows 3 s for the first response; past this there is no point in trying again. */
const WINDOW_MS = 2_500;
/** Acknowledgements nobody took (discord.js did not turn the packet into an interaction) are dropped after this. */
const UNCLAIMED_MS = 10_000;
const ALREADY_ACKNOWLEDGED = 40_060;

/** Discord refused the deferral, or it did not get there. Never carries the interaction's token. */
export class AcknowledgeError extends Error {
  override readonly name = 'AcknowledgeError';
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly code: number | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A deferral sent from the gateway packet: what was sent, and when it has gone through. */
export interface SentDeferral {
  deferral: Deferral;
  done: Promise<void>;
}

interface Pending extends SentDeferral {
  at: number;
}

export class InteractionAcknowledger {
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #headers: Record<string, string>;
  readonly #now: () => number;
  readonly #pending = new Map<string, Pending>();

  constructor(options: AcknowledgerOptions) {
    const api = new URL(options.api);
    this.#pool = new Pool(api.origin, {
      connections: options.connections ?? DEFERRAL_CONNECTIONS,
      keepAliveTimeout: KEEP_ALIVE_MS,
      headersTimeout: WINDOW_MS,
      bodyTimeout: WINDOW_MS,
    });
    this.#prefix = `${api.pathname.replace(/\/+$/, '')}/v${options.version}/interactions/`;
    this.#headers = { 'content-type': 'application/json', 'user-agent': options.userAgent };
    this.#now = options.now ?? Date.now;
  }

  /** Sends the deferral of this interaction now; `take` gives its outcome. Never throws. */
  send(id: string, token: string, deferral: Deferral): void {
    const at = this.#now();
    this.#sweep(at);
    const done = this.#deliver(id, token, deferral, at);
    // Taken or not, a failure must not become an unhandled rejection.
    done.catch(() => {});
    this.#pending.set(id, { deferral, done, at });
  }

  /** The deferral sent for this interaction, once; undefined when none was. */
  take(id: string): SentDeferral | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    return { deferral: pending.deferral, done: pending.done };
  }

  /** Closes the connections; deferrals under way finish first. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  #sweep(now: number): void {
    for (const [id, pending] of this.#pending) {
      if (now - pending.at < UNCLAIMED_MS) break;
      this.#pending.delete(id);
    }
  }

  async #deliver(id: string, token: string, deferral: Deferral, startedAt: number): Promise<void> {
    const body = JSON.stringify(
      deferral.type === InteractionResponseType.DeferredChannelMessageWithSource
        ? { type: deferral.type, data: { flags: deferral.ephemeral ? MessageFlags.Ephemeral : 0 } }
        : { type: deferral.type },
    );
    const path = `${this.#prefix}${encodeURIComponent(id)}/${encodeURIComponent(token)}/callback`;
    for (let attempt = 1; ; attempt++) {
      let response: Dispatcher.ResponseData;
      try {
        response = await this.#pool.request({ method: 'POST', path, body, headers: this.#headers });
      } catch (err) {
        // Once more on a connection that failed (a kept-alive one the other side had just closed,
        // say): if the first did arrive, Discord answers the second with "already acknowledged".
        if (attempt === 1 && this.#now() - startedAt < WINDOW_MS) continue;
        throw new AcknowledgeError('the deferral did not reach Discord', undefined, undefined, {
          cause: err,
        });
      }
      const status = response.statusCode;
      if (status < 300) {
        await response.body.dump();
        return;
      }
      const answer = await readError(response);
      if (attempt > 1 && answer.code === ALREADY_ACKNOWLEDGED) return;
      if (status === 429) {
        const waitMs = retryAfterMs(answer.retryAfter, response.headers, this.#now());
        if (this.#now() + waitMs - startedAt <= WINDOW_MS) {
          await new Promise((resolve) => setTimeout(resolve, waitMs));
          continue;
        }
      }
      throw new AcknowledgeError(
        `Discord refused the deferral: ${status} ${answer.message}${answer.code === undefined ? '' : ` (${answer.code})`}`,
        status,
        answer.code,
      );
    }
  }
}

/** Discord's error body: { message, code, retry_after? }. Only its message and numbers are kept. */
async function readError(
  response: Dispatcher.ResponseData,
): Promise<{ message: string; code: number | undefined; retryAfter: number | undefined }> {
  let parsed: unknown;
  try {
    parsed = await response.body.json();
  } catch {
    parsed = undefined;
  }
  const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const message = typeof record.message === 'string' ? record.message.slice(0, 200) : 'no message';
  return {
    message,
    code: typeof record.code === 'number' ? record.code : undefined,
    retryAfter: typeof record.retry_after === 'number' ? record.retry_after : undefined,
  };
}

/**
 * Milliseconds to wait after a 429: the body's retry_after (seconds, fractional, the most precise
 * Discord gives), else the headers as the directory client reads them, else 1 s.
 */
function retryAfterMs(
  bodySeconds: number | undefined,
  headers: Dispatcher.ResponseData['headers'],
  now: number,
): number {
  if (bodySeconds !== undefined && Number.isFinite(bodySeconds) && bodySeconds >= 0) {
    return Math.ceil(bodySeconds * 1_000);
  }
  return retryAfterFromHeaders(headers, now) ?? 1_000;
}

/**
 * Tells discord.js that the deferral went out, as deferReply / deferUpdate would have: its
 * editReply and followUp check these fields.
 */
export function markDeferred(
  interaction: ChatInputCommandInteraction | ButtonInteraction,
  deferral: Deferral,
): void {
  interaction.deferred = true;
  if (deferral.type === InteractionResponseType.DeferredChannelMessageWithSource) {
    interaction.ephemeral = deferral.ephemeral;
  }
}

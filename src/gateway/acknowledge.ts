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
 * How it is sent (each measured under the burst, see the README's Benchmarks): a few keep-alive
 * connections, each carrying up to DEFERRAL_PIPELINING callbacks at once (HTTP/1.1 pipelining:
 * undici writes a callback at once on a connection already in use, where a connection that has
 * gone idle waits a turn of the event loop to be checked, and a new one costs a handshake on both
 * sides), through undici's dispatch API with a handler that keeps only the status, the headers and
 * an error's short body (request()'s response stream and promise cost more than the rest of the
 * callback). Pipelining a POST is safe here because a callback is idempotent in effect: Discord
 * answers a repeat with "already acknowledged" (40060), which counts as success once the callback
 * has been sent more than once (by us after a dropped connection, or by undici, which sends the
 * callbacks queued behind a failed one again).
 *
 * What @discordjs/rest would have done for a deferral, this does too: a 429 is waited out and the
 * callback sent again (within the 3 s Discord allows for the first response), and an error is a
 * `DiscordAPIError`-like one with Discord's status and code.
 */

import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
// The values from discord-api-types, not discord.js: the gateway's thread (gateway-thread.ts)
// loads this file, and discord.js would cost it some 10 MB of heap for two enums.
import { DefaultRestOptions, DefaultUserAgent, type RESTOptions } from '@discordjs/rest';
import type {
  ButtonInteraction,
  ChatInputCommandInteraction,
  ModalSubmitInteraction,
  UserContextMenuCommandInteraction,
} from 'discord.js';
import { InteractionResponseType, MessageFlags } from 'discord-api-types/v10';
import { buildConnector, type Dispatcher, Pool } from 'undici';
import { retryAfterFromHeaders } from '../http/retry-after.js';
import type { Deferral } from './deferral-rules.js';

/**
 * Where the deferrals go and how they introduce themselves: as discord.js's REST (`rest`, its
 * options; default, @discordjs/rest's defaults, which the bot keeps) at `api`, its API root.
 */
export function deferralAddress(
  api: string | undefined,
  rest: Pick<RESTOptions, 'version' | 'userAgentAppendix'> = DefaultRestOptions,
): Pick<AcknowledgerOptions, 'api' | 'version' | 'userAgent'> {
  return {
    api: api || DefaultRestOptions.api,
    version: rest.version,
    userAgent: `${DefaultUserAgent} ${rest.userAgentAppendix}`.trim(),
  };
}

export interface AcknowledgerOptions {
  /** Discord's API root, as discord.js has it (`client.rest.options.api`), e.g. https://discord.com/api. */
  api: string;
  /** API version, as discord.js has it (`client.rest.options.version`). */
  version: string;
  userAgent: string;
  /** Connections of their own; default DEFERRAL_CONNECTIONS. */
  connections?: number;
  /** Callbacks in flight on one connection; default DEFERRAL_PIPELINING. */
  pipelining?: number;
  now?: () => number;
}

/**
 * Sized for a burst: 8 connections of 32 callbacks each carry 256 deferrals at once, so a burst of
 * 200 (bench scenario 2) is written whole as it is read, none waiting for an answer to free a
 * place. With 16 on each, the last 72 of 200 waited for the first answers, and those came back
 * only when Discord's side got a core: traced per interaction, the slowest 2% were read and handed
 * to undici about 15 ms after their dispatch, then reached Discord's side 56 ms later on average. One connection per deferral, as before
 * that, cost 64 fresh connections and three round trips per 200. Each is kept 60 s idle.
 */
export const DEFERRAL_CONNECTIONS = 8;
export const DEFERRAL_PIPELINING = 32;
const KEEP_ALIVE_MS = 60_000;
/** Discord allows 3 s for the first response; past this there is no point in trying again. */
const WINDOW_MS = 2_500;
/** Acknowledgements nobody took (discord.js did not turn the packet into an interaction) are dropped after this. */
const UNCLAIMED_MS = 10_000;
const ALREADY_ACKNOWLEDGED = 40_060;
/** An error's body is read up to this (Discord's are a few hundred bytes); a 2xx body is not kept. */
const MAX_ERROR_BODY = 16_384;

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
  #inFlight = 0;
  readonly #quietWaiters = new Set<() => void>();

  constructor(options: AcknowledgerOptions) {
    const api = new URL(options.api);
    const connect = buildConnector({});
    this.#pool = new Pool(api.origin, {
      connect: (opts, callback) =>
        connect(opts, (...args) => {
          if (args[1]) writeOncePerTurn(args[1]);
          callback(...args);
        }),
      connections: options.connections ?? DEFERRAL_CONNECTIONS,
      pipelining: options.pipelining ?? DEFERRAL_PIPELINING,
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
    this.track(id, deferral, this.#deliver(id, token, deferral, this.#now()));
  }

  /**
   * A deferral sent elsewhere (by the gateway's thread), kept as if sent here: `take` and `quiet`
   * count it until `done` settles. Never throws.
   */
  track(id: string, deferral: Deferral, done: Promise<void>): void {
    const at = this.#now();
    this.#sweep(at);
    this.#inFlight += 1;
    // Taken or not, a failure must not become an unhandled rejection.
    done
      .catch(() => {})
      .finally(() => {
        this.#inFlight -= 1;
        if (this.#inFlight === 0) for (const wake of [...this.#quietWaiters]) wake();
      });
    this.#pending.set(id, { deferral, done, at });
  }

  /**
   * Resolves once no deferral is on its way, or after `maxWaitMs`: the work an interaction asks
   * for (with 15 minutes to answer) waits while others still wait for their first response (3 s).
   */
  quiet(maxWaitMs: number): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#quietWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, maxWaitMs);
      this.#quietWaiters.add(wake);
    });
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
    let sends = 0;
    for (let attempt = 1; ; attempt++) {
      let answer: Answer;
      try {
        answer = await this.#post(path, body);
        sends += answer.sends;
      } catch (err) {
        sends += err instanceof SendError ? err.sends : 0;
        // Once more on a connection that failed (a kept-alive one the other side had just closed,
        // say): if the first did arrive, Discord answers the second with "already acknowledged".
        if (attempt === 1 && this.#now() - startedAt < WINDOW_MS) continue;
        throw new AcknowledgeError('the deferral did not reach Discord', undefined, undefined, {
          cause: err instanceof SendError ? err.cause : err,
        });
      }
      const status = answer.status;
      if (status < 300) return;
      const refusal = readError(answer.body);
      if (sends > 1 && refusal.code === ALREADY_ACKNOWLEDGED) return;
      if (status === 429) {
        const waitMs = retryAfterMs(refusal.retryAfter, answer.headers, this.#now());
        if (this.#now() + waitMs - startedAt <= WINDOW_MS) {
          await new Promise((resolve) => setTimeout(resolve, waitMs));
          continue;
        }
      }
      throw new AcknowledgeError(
        `Discord refused the deferral: ${status} ${refusal.message}${refusal.code === undefined ? '' : ` (${refusal.code})`}`,
        status,
        refusal.code,
      );
    }
  }

  /** One callback POST; `sends` counts how often undici wrote it (more than once after a failed connection). */
  #post(path: string, body: string): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      this.#pool.dispatch(
        { method: 'POST', path, body, headers: this.#headers, idempotent: true, blocking: false },
        new CallbackHandler(resolve, reject),
      );
    });
  }
}

/**
 * What a connection is asked to write in one turn of the event loop (everything the current
 * callback and its microtasks produce) leaves in one write at the end of it. A burst's packets
 * arrive many to a read of the gateway's socket, and undici writes each callback as it is
 * dispatched (or all the waiting ones in a loop once a connection is free): one write each, a
 * system call and on loopback the receiver's work too, was measured as the largest single cost
 * of a deferral on the gateway's thread. undici has no option for this; it corks a socket around
 * each request's own writes, and corks nest, so its writes wait for ours. Only these connections,
 * made for the acknowledger alone, are changed.
 */
function writeOncePerTurn(socket: Socket): void {
  const write = socket.write as (...args: unknown[]) => boolean;
  let holding = false;
  const release = (): void => {
    holding = false;
    socket.uncork();
  };
  socket.write = ((...args: unknown[]): boolean => {
    if (!holding) {
      holding = true;
      socket.cork();
      process.nextTick(release);
    }
    return write.apply(socket, args);
  }) as Socket['write'];
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of a refusal (empty for 2xx), cut at MAX_ERROR_BODY. */
  body: Buffer;
  sends: number;
}

/** The callback failed to get an answer; `sends` says whether it may have arrived all the same. */
class SendError extends Error {
  constructor(
    readonly sends: number,
    override readonly cause: unknown,
  ) {
    super('the callback got no answer');
  }
}

/**
 * undici's dispatch handler for one callback: the status, headers and an error's body, no stream.
 * onRequestStart runs once per time the callback is written (undici writes the ones pipelined
 * behind a failed callback again on a new connection).
 */
class CallbackHandler implements Dispatcher.DispatchHandler {
  #sends = 0;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (err: SendError) => void,
  ) {}

  onRequestStart(): void {
    this.#sends += 1;
    this.#chunks = [];
    this.#size = 0;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#status < 300 || this.#size >= MAX_ERROR_BODY) return;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    const body = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    this.resolve({ status: this.#status, headers: this.#headers, body, sends: this.#sends });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.reject(new SendError(this.#sends, err));
  }
}

/** Discord's error body: { message, code, retry_after? }. Only its message and numbers are kept. */
function readError(body: Buffer): {
  message: string;
  code: number | undefined;
  retryAfter: number | undefined;
} {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
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
function retryAfterMs(bodySeconds: number | undefined, headers: IncomingHttpHeaders, now: number): number {
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
  interaction:
    | ChatInputCommandInteraction
    | UserContextMenuCommandInteraction
    | ButtonInteraction
    | ModalSubmitInteraction,
  deferral: Deferral,
): void {
  interaction.deferred = true;
  if (deferral.type === InteractionResponseType.DeferredChannelMessageWithSource) {
    interaction.ephemeral = deferral.ephemeral;
  }
}

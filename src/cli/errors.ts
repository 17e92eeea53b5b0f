/**
 * How the CLI ends: every failure becomes one exit code and one line on stderr.
 *   0 ok · 2 usage or configuration · 3 token refused · 4 not found · 5 rate limited
 *   6 directory unavailable · 7 answer unusable · 8 output not written · 1 anything unexpected
 */
import { ConfigError } from '../config/env.js';
import { type DirectoryErrorCode, isDirectoryError, RateLimitedError } from '../directory/errors.js';

export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  rateLimited: 5,
  unavailable: 6,
  invalidResponse: 7,
  output: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake in the command line: the message is followed by a usage hint for `command`. */
export class UsageError extends Error {
  /** The command whose usage to show, e.g. 'links create'; undefined for the top level. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/**
 * A command the chosen API version does not have (`up` on v3, `search` on v2): one line that names
 * the versions that have it, exit code as for a usage error, no usage hint (the usage was right).
 */
export class VersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VersionError';
  }
}

/** stdout or stderr refused a write: a full disk, or a pipe whose reader has gone (EPIPE). */
export class OutputError extends Error {
  /** The system error code, e.g. 'EPIPE' or 'ENOSPC', when there is one. */
  readonly code: string | undefined;
  constructor(cause: Error) {
    super(`could not write the output: ${cause.message}`, { cause });
    this.name = 'OutputError';
    const code = 'code' in cause ? cause.code : undefined;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/** Configuration variables and the flags that set them, to name the flag in a configuration error. */
export type FlagSources = ReadonlyMap<string, string>;

/** What a failure is, for `--json` errors: a directory error's code, or one of the CLI's own. */
export type FailureKind = DirectoryErrorCode | 'Usage' | 'Configuration' | 'Output' | 'Unexpected';

export interface Failure {
  exitCode: ExitCode;
  kind: FailureKind;
  /** The HTTP status when the directory answered, else null. */
  status: number | null;
  /** One line, without the `directory:` prefix. */
  message: string;
  /** Show a usage hint after the message. */
  usage: boolean;
  command: string | undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function formatWait(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.ceil(ms))} ms`;
  const seconds = Math.ceil(ms / 1_000);
  if (seconds < 120) return `${seconds} s`;
  return `${Math.ceil(seconds / 60)} min`;
}

function configMessage(err: ConfigError, fromFlags: FlagSources): string {
  const problems = err.problems.map((problem) => {
    for (const [variable, flag] of fromFlags) {
      if (problem.startsWith(`${variable}:`)) return `${flag} (${variable})${problem.slice(variable.length)}`;
    }
    return problem;
  });
  return `invalid configuration: ${problems.join('; ')}`;
}

/**
 * The client's messages name its method (`getBotComments`); the user typed a command. Every
 * mention of the method becomes the command words, e.g. 'comments bot'.
 */
function namingCommand(text: string, method: string | undefined, label: string | undefined): string {
  if (label === undefined || method === undefined || !/^\w+$/.test(method)) return text;
  return text.replace(new RegExp(`\\b${method}\\b`, 'g'), `'${label}'`);
}

/**
 * Maps anything thrown while running a command to its exit code and message. `label` is the
 * command as typed (see Command.label), named instead of the client's method.
 */
export function describeFailure(err: unknown, fromFlags: FlagSources = new Map(), label?: string): Failure {
  const failure = (exitCode: ExitCode, kind: FailureKind, message: string, status?: number): Failure => ({
    exitCode,
    kind,
    status: status ?? null,
    message: oneLine(message),
    usage: false,
    command: undefined,
  });
  if (err instanceof UsageError) {
    return { ...failure(EXIT.usage, 'Usage', err.message), usage: true, command: err.command };
  }
  if (err instanceof VersionError) return failure(EXIT.usage, 'Usage', err.message);
  if (err instanceof ConfigError) return failure(EXIT.usage, 'Configuration', configMessage(err, fromFlags));
  if (err instanceof OutputError) return failure(EXIT.output, 'Output', err.message);
  if (!isDirectoryError(err)) {
    const text = err instanceof Error ? err.message : String(err);
    return failure(EXIT.unexpected, 'Unexpected', `unexpected error: ${text}`);
  }
  const plain = (exitCode: ExitCode, message: string): Failure =>
    failure(exitCode, err.code, namingCommand(message, err.method, label), err.status);
  switch (err.code) {
    case 'InvalidArgument':
      return plain(EXIT.usage, err.message);
    case 'BadRequest':
      // The directory refused the arguments: a usage problem from the user's point of view.
      return plain(EXIT.usage, `the directory refused the request: ${err.message}`);
    case 'Unauthorized':
      return plain(EXIT.auth, `the directory refused the token (${err.message})`);
    case 'Forbidden':
      return plain(EXIT.auth, `the directory refused access (${err.message})`);
    case 'TokenKindNotAccepted':
      return plain(EXIT.auth, `${err.message} (set --token-kind or DIRECTORY_TOKEN_KIND)`);
    case 'NotFound':
      return plain(EXIT.notFound, err.message);
    case 'RateLimited': {
      const wait = err instanceof RateLimitedError ? err.retryAfterMs : undefined;
      const suffix = wait === undefined ? '' : `; try again in ${formatWait(wait)}`;
      return plain(EXIT.rateLimited, `rate limited by the directory (${err.message})${suffix}`);
    }
    case 'Unavailable':
      return plain(EXIT.unavailable, `the directory is unavailable: ${err.message}`);
    case 'InvalidResponse':
      return plain(EXIT.invalidResponse, err.message);
    default:
      return plain(EXIT.unexpected, err.message);
  }
}

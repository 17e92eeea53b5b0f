/**
 * How the CLI ends: every failure becomes one exit code and one line on stderr.
 *   0 ok · 2 usage or configuration · 3 token refused · 4 not found · 5 rate limited
 *   6 directory unavailable · 7 answer unusable · 8 output not written · 1 anything unexpected
 */
import { ConfigError } from '../config/env.js';
import { type DirectoryErrorCode, isDirectoryError, RateLimitedError } from '../directory/errors.js';
import {
  type OperatorLanguage,
  type OperatorMessage,
  type OperatorParams,
  quantity,
  say,
  sayMessage,
} from '../i18n/operator.js';

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

/** A usage error's words: a key under `cli.error.` in the operator catalogs and its values. */
export function cliError(key: string, params?: OperatorParams): OperatorMessage {
  return params === undefined ? { key: `cli.error.${key}` } : { key: `cli.error.${key}`, params };
}

/**
 * An error the CLI says in the operator's language: `message` (the Error's) is the English, for
 * --json and the logs; `said` gives the others.
 */
class SaidError extends Error {
  readonly said: OperatorMessage | string;
  constructor(said: OperatorMessage | string, options?: ErrorOptions) {
    super(sayMessage('en', said), options);
    this.said = said;
  }

  in(language: OperatorLanguage): string {
    return sayMessage(language, this.said);
  }
}

/** A mistake in the command line: the message is followed by a usage hint for `command`. */
export class UsageError extends SaidError {
  /** The command whose usage to show, e.g. 'links create'; undefined for the top level. */
  readonly command: string | undefined;
  constructor(message: OperatorMessage | string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/**
 * A command the chosen API version does not have (`up` on v3, `search` on v2): one line that names
 * the versions that have it, exit code as for a usage error, no usage hint (the usage was right).
 */
export class VersionError extends SaidError {
  constructor(message: OperatorMessage | string) {
    super(message);
    this.name = 'VersionError';
  }
}

/** stdout or stderr refused a write: a full disk, or a pipe whose reader has gone (EPIPE). */
export class OutputError extends SaidError {
  /** The system error code, e.g. 'EPIPE' or 'ENOSPC', when there is one. */
  readonly code: string | undefined;
  constructor(cause: Error) {
    super(cliError('output', { error: cause.message }), { cause });
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

function formatWait(ms: number, language: OperatorLanguage): string {
  if (ms < 1_000) return quantity(Math.max(0, Math.ceil(ms)), 'ms', language);
  const seconds = Math.ceil(ms / 1_000);
  if (seconds < 120) return quantity(seconds, 's', language);
  return quantity(Math.ceil(seconds / 60), 'min', language);
}

function configMessage(err: ConfigError, fromFlags: FlagSources, language: OperatorLanguage): string {
  const problems = err.problemsIn(language).map((problem) => {
    for (const [variable, flag] of fromFlags) {
      if (problem.startsWith(`${variable}:`)) return `${flag} (${variable})${problem.slice(variable.length)}`;
    }
    return problem;
  });
  return say(language, 'cli.error.configuration', { problems: problems.join('; ') });
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
 * command as typed (see Command.label), named instead of the client's method. The message is in
 * `language`; the directory's own words inside it stay as it sent them.
 */
export function describeFailure(
  err: unknown,
  fromFlags: FlagSources = new Map(),
  label?: string,
  language: OperatorLanguage = 'en',
): Failure {
  const t = (key: string, params: OperatorParams): string => say(language, `cli.error.${key}`, params);
  const failure = (exitCode: ExitCode, kind: FailureKind, message: string, status?: number): Failure => ({
    exitCode,
    kind,
    status: status ?? null,
    message: oneLine(message),
    usage: false,
    command: undefined,
  });
  if (err instanceof UsageError) {
    return { ...failure(EXIT.usage, 'Usage', err.in(language)), usage: true, command: err.command };
  }
  if (err instanceof VersionError) return failure(EXIT.usage, 'Usage', err.in(language));
  if (err instanceof ConfigError) {
    return failure(EXIT.usage, 'Configuration', configMessage(err, fromFlags, language));
  }
  if (err instanceof OutputError) return failure(EXIT.output, 'Output', err.in(language));
  if (!isDirectoryError(err)) {
    const text = err instanceof Error ? err.message : String(err);
    return failure(EXIT.unexpected, 'Unexpected', t('unexpected', { error: text }));
  }
  const plain = (exitCode: ExitCode, message: string): Failure =>
    failure(exitCode, err.code, namingCommand(message, err.method, label), err.status);
  switch (err.code) {
    case 'InvalidArgument':
      return plain(EXIT.usage, err.message);
    case 'BadRequest':
      // The directory refused the arguments: a usage problem from the user's point of view.
      return plain(EXIT.usage, t('badRequest', { error: err.message }));
    case 'Unauthorized':
      return plain(EXIT.auth, t('unauthorized', { error: err.message }));
    case 'Forbidden':
      return plain(EXIT.auth, t('forbidden', { error: err.message }));
    case 'TokenKindNotAccepted':
      return plain(EXIT.auth, t('tokenKind', { error: err.message }));
    case 'NotFound':
      return plain(EXIT.notFound, err.message);
    case 'RateLimited': {
      const wait = err instanceof RateLimitedError ? err.retryAfterMs : undefined;
      const suffix = wait === undefined ? '' : t('retryIn', { wait: formatWait(wait, language) });
      return plain(EXIT.rateLimited, `${t('rateLimited', { error: err.message })}${suffix}`);
    }
    case 'Unavailable':
      return plain(EXIT.unavailable, t('unavailable', { error: err.message }));
    case 'InvalidResponse':
      return plain(EXIT.invalidResponse, err.message);
    default:
      return plain(EXIT.unexpected, err.message);
  }
}

/**
 * One error vocabulary up to the user: each error class maps to one localized message and one
 * log level. Misconfiguration (token refused, wrong kind, no token) is the operator's problem:
 * logged at error, and the user is told the bot is misconfigured, never why in detail. A handler
 * that words its failures otherwise (/up) builds on describeError in its own describeFailure.
 */
import { TimestampStyles } from 'discord.js';
import { isDirectoryError } from '../directory/index.js';
import type { Translate } from '../i18n/index.js';
import { COLORS } from '../render/colors.js';
import type { EmbedMessage } from '../render/message.js';
import { safeText, timestamp } from '../render/text.js';
import { StoreUnavailableError } from '../store/errors.js';

/** Which record a NotFound or a bad reference is about, for its message. */
export type Subject = 'bot' | 'server' | 'profile';

export type LogLevel = 'info' | 'warn' | 'error';

export interface DescribedError {
  text: string;
  level: LogLevel;
  /** Stable code for logs and metrics. */
  code: string;
}

/** Bad input from the user (a reference that is not one); thrown by handlers. */
export class UserInputError extends Error {
  constructor(readonly subject: Subject | 'generic') {
    super(`invalid ${subject} reference`);
    this.name = 'UserInputError';
  }
}

/** /server without a reference outside a server: there is no "this server" to show. */
export class ServerNeededError extends Error {
  constructor() {
    super('no server to show');
    this.name = 'ServerNeededError';
  }
}

/** The command needs a guild and was used elsewhere. */
export class GuildOnlyError extends Error {
  constructor() {
    super('guild only');
    this.name = 'GuildOnlyError';
  }
}

/** How a failure is told: its log level and code, and the private answer the user sees. */
export interface FailureAnswer {
  described: DescribedError;
  message: EmbedMessage;
}

/** A handler's own wording of its failures (SlashCommand.describeFailure). */
export type DescribeFailure = (err: unknown, t: Translate, now: number) => FailureAnswer;

export function describeError(
  err: unknown,
  t: Translate,
  now: number,
  options: { subject?: Subject | undefined } = {},
): DescribedError {
  if (err instanceof UserInputError) {
    return { text: t(`errors.invalidArgument.${err.subject}`), level: 'info', code: 'InvalidInput' };
  }
  if (err instanceof GuildOnlyError) return { text: t('errors.guildOnly'), level: 'info', code: 'GuildOnly' };
  if (err instanceof ServerNeededError) {
    return { text: t('errors.serverNeeded'), level: 'info', code: 'ServerNeeded' };
  }
  // The database is away for now (PostgreSQL lost): nothing was written, the same request may work soon.
  if (err instanceof StoreUnavailableError) {
    return { text: t('errors.storeUnavailable'), level: 'warn', code: 'StoreUnavailable' };
  }
  if (!isDirectoryError(err)) return { text: t('errors.internal'), level: 'error', code: 'Internal' };
  switch (err.code) {
    case 'NotFound':
      return { text: t(`errors.notFound.${options.subject ?? 'generic'}`), level: 'info', code: err.code };
    case 'Unauthorized':
      return { text: t('errors.unauthorized'), level: 'error', code: err.code };
    case 'TokenKindNotAccepted':
      return { text: t('errors.tokenKind'), level: 'error', code: err.code };
    case 'Forbidden':
      return { text: t('errors.forbiddenGeneric'), level: 'warn', code: err.code };
    case 'BadRequest':
      return {
        text: t('errors.badRequest', { reason: safeText(err.message, 300) }),
        level: 'warn',
        code: err.code,
      };
    case 'RateLimited': {
      const wait =
        'retryAfterMs' in err && typeof err.retryAfterMs === 'number' ? err.retryAfterMs : undefined;
      // A wait that ends past any usable time is no wait the user can be told.
      const when = wait === undefined ? null : timestamp(new Date(now + wait), TimestampStyles.RelativeTime);
      return {
        text: when === null ? t('errors.rateLimitedNoWait') : t('errors.rateLimited', { when }),
        level: 'info',
        code: err.code,
      };
    }
    case 'Unavailable':
      // The shared limits (the store) could not be read: the directory was never asked.
      if ('reason' in err && err.reason === 'limits')
        return { text: t('errors.limitsUnavailable'), level: 'warn', code: err.code };
      return { text: t('errors.unavailable'), level: 'warn', code: err.code };
    case 'InvalidResponse':
      return { text: t('errors.invalidResponse'), level: 'error', code: err.code };
    case 'InvalidArgument':
      // Input was checked before the client; what reaches here is a missing token: misconfiguration.
      return { text: t('errors.tokenKind'), level: 'error', code: err.code };
  }
}

/** The answer a handler's failure gets unless the handler words it itself. */
export function describeFailure(
  err: unknown,
  t: Translate,
  now: number,
  subject: Subject | undefined,
): FailureAnswer {
  const described = describeError(err, t, now, { subject });
  return {
    described,
    message: { embeds: [{ color: COLORS.error, description: `❌ ${described.text}` }], components: [] },
  };
}

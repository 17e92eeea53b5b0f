/**
 * v3's error codes (docs-v3 `docs/api/index.mdx`, "Error codes": "these numbers will never change,
 * but new ones may be added"), and which of our errors each is when the HTTP status does not say.
 *
 * The Russian page and boticordpy number 0–8 differently (0 UnknownError, 1 InternalServerError,
 * 2 RateLimited, 3 NotFound, …); the English table is the current one (docs-v3 commit 9702809,
 * and the live docs.boticord.top/api/). The HTTP status, when it is one of the documented six, is
 * what decides the error's class; the code names it. See docs/directory-v3-sources.md.
 */
import type { DirectoryErrorCode } from '../errors.js';

export const V3_ERROR_CODES: Readonly<Record<number, string>> = {
  0: 'InternalServerError',
  1: 'RateLimited',
  2: 'NotFound',
  3: 'Forbidden',
  4: 'Unauthorized',
  5: 'BadRequest',
  6: 'RpcError',
  7: 'WsError',
  8: 'UnknownError',
  9: 'ThirdPartyFail',
  10: 'UnknownUser',
  11: 'ShortLinkTaken',
  12: 'UnknownShortDomain',
  13: 'UnknownLibrary',
  14: 'TokenInvalid',
  15: 'UnknownResource',
  16: 'UnknownTag',
  17: 'PermissionDenied',
  18: 'UnknownComment',
  19: 'UnknownBot',
  20: 'UnknownServer',
  21: 'UnknownBadge',
  22: 'UserAlreadyHasABadge',
  23: 'InvalidInviteCode',
  24: 'ServerAlreadyExists',
  25: 'BotNotPresentOnQueueServer',
  26: 'UnknownUp',
  27: 'TooManyUps',
  28: 'InvalidStatus',
  29: 'UnknownReport',
  30: 'UnsupportedMediaType',
  31: 'UnknownApplication',
  32: 'AutomatedRequestsNotAllowed',
  33: 'InvalidRating',
  34: 'DuplicateBot',
  35: 'CannotDetectIp',
  36: 'ThirdPartyMonitoringFail',
  37: 'ThirdPartyMonitoringNotApproved',
  38: 'TurnstileError',
  39: 'ServiceConfiguredIncorrectly',
  40: 'UnknownBoost',
  41: 'BoostExpired',
  42: 'AlreadyCommented',
  43: 'ReviewRatingsConflict',
  44: 'TooManyConsecutiveMessages',
  45: 'NoServiceBot',
  46: 'AlreadyReported',
  47: 'CannotDeleteOwner',
  48: 'BlockedBot',
  49: 'UnknownAutomation',
  50: 'OnlyOwnerCanAddServer',
  51: 'ReviewReported',
  52: 'LowPremiumLevel',
  53: 'CaptchaServiceUnavailable',
  54: 'InvalidCaptchaAnswer',
  55: 'ResourceNotOwned',
  56: 'ResourceFetchTimeout',
  57: 'CannotFetchOwner',
  58: 'TooManyCaptchaAttempts',
  59: 'EmptyReview',
};

/** Our error for a code, when the status is not one that says (a 200 with ok: false, say). */
const CLASS_OF: Readonly<Record<number, DirectoryErrorCode>> = {
  0: 'Unavailable',
  1: 'RateLimited',
  2: 'NotFound',
  3: 'Forbidden',
  4: 'Unauthorized',
  5: 'BadRequest',
  6: 'Unavailable',
  7: 'Unavailable',
  8: 'Unavailable',
  9: 'Unavailable',
  10: 'NotFound',
  14: 'Unauthorized',
  15: 'NotFound',
  17: 'Forbidden',
  18: 'NotFound',
  19: 'NotFound',
  20: 'NotFound',
  26: 'NotFound',
  27: 'RateLimited',
  48: 'Forbidden',
  55: 'Forbidden',
  56: 'Unavailable',
};

/** How long an overrun blocks (the Russian docs: "блокировка составляет 10 секунд"). */
export const V3_BLOCK_MS = 10_000;

export function v3CodeName(code: number): string {
  return V3_ERROR_CODES[code] ?? `code ${code}`;
}

export function v3ErrorClass(code: number): DirectoryErrorCode {
  return CLASS_OF[code] ?? 'BadRequest';
}

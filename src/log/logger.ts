/**
 * pino with secrets removed at the logger, twice over: known fields are redacted by path, and
 * every line is scrubbed of the configured secret values before it is written, so a token
 * inside an error message, a stack or a nested request object cannot slip through. Every line
 * also has the control characters JSON leaves raw (DEL, C1, bidi controls) escaped: logs carry the
 * directory's text and are read in terminals.
 */
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { escapeControls } from '../text/controls.js';

export type { Logger };

export const REDACT_PATHS = [
  'token',
  '*.token',
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  '*.headers.authorization',
  '*.*.headers.authorization',
  'directoryToken',
  'discordToken',
  '*.directoryToken',
  '*.discordToken',
  'config.directory.token',
  'config.discord.token',
];

export const REDACTED = '[REDACTED]';

export interface CreateLoggerOptions {
  level?: string;
  /** Secret values to scrub from every line, wherever they appear. */
  secrets?: readonly string[];
  destination?: DestinationStream;
  base?: Record<string, unknown>;
  /** Fields added to every line (the active span's trace and span ids when tracing is on). */
  mixin?: () => Record<string, unknown>;
}

/**
 * Interaction tokens travel in webhook and callback URLs (discord.js puts the URL on its API
 * errors); each is a 15-minute credential to answer as the bot, so it is cut from every line.
 */
const INTERACTION_TOKEN_IN_URL = /\/(webhooks|interactions)\/(\d{17,20})\/([A-Za-z0-9._-]{20,})/g;

export function scrub(line: string, secrets: readonly string[]): string {
  let out = line.replace(INTERACTION_TOKEN_IN_URL, `/$1/$2/${REDACTED}`);
  for (const secret of secrets) {
    if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const secrets = [...(options.secrets ?? [])]
    .filter((s) => s.length >= 4)
    // JSON escapes some characters: scrub the escaped form too.
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1)])
    .sort((a, b) => b.length - a.length);
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    base: options.base ?? { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    ...(options.mixin ? { mixin: options.mixin } : {}),
    hooks: {
      // Inside a JSON string the escape is the same value: the line parses to what was logged.
      streamWrite: (line: string) => escapeControls(scrub(line, secrets)),
    },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

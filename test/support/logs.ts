/** Parsed pino lines, as the tests that capture the bot's logs read them. */

export interface LogEntry {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

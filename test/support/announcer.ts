/**
 * What the unit tests of the bot's posting code hand it in place of Discord and the store: a REST
 * client that keeps the bodies it would post, and the directory-event handler's dependencies with
 * nothing in them, for a test to override what it looks at.
 */
import type { HandlerOptions } from '../../src/features/webhooks/handle.js';
import { createLogger } from '../../src/log/logger.js';

/** A REST client (as `never`, for the options) that keeps each body it would post; each post gets the next id. */
export function recordingRest(): { rest: never; posted: Array<Record<string, unknown>> } {
  const posted: Array<Record<string, unknown>> = [];
  const rest = {
    post: async (_route: string, options: { body: Record<string, unknown> }) => {
      posted.push(options.body);
      return { id: String(posted.length) };
    },
  };
  return { rest: rest as never, posted };
}

/** The handler's dependencies, empty: no webhook set up, no settings, no history, no reminder, a silent log. */
export function emptyHandlerOptions(
  overrides: Partial<HandlerOptions> & Pick<HandlerOptions, 'rest'>,
): HandlerOptions {
  return {
    webhooks: { get: async () => undefined, setProblem: async () => undefined },
    settings: { get: async () => undefined },
    history: { record: async () => true, timed: async () => [], has: async () => false },
    reminders: {
      moveForUp: async () => undefined,
      getGuild: async () => undefined,
      scheduleGuild: async () => 'scheduled',
    },
    wakeReminders: () => undefined,
    comments: { get: async () => undefined, put: async () => undefined },
    guild: () => undefined,
    logger: createLogger({ level: 'silent' }),
    ...overrides,
  };
}

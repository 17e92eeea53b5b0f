/**
 * The one way the CLI writes: every text for stdout or stderr, results, help, errors and JSON
 * alike, goes through a Printer, so no field of a future command can skip the scrubbing of
 * secrets or the escaping of terminal controls.
 */

import { escapeControls } from '../text/controls.js';
import { OutputError } from './errors.js';

/** process.stdout / process.stderr, or a test's capture: `done` runs once the text is written. */
export interface Output {
  write(text: string, done: (error?: Error | null) => void): unknown;
}

/** Writes a text and settles once it is written; rejects with an OutputError when it cannot be. */
export type Printer = (text: string) => Promise<void>;

const REDACTED = '[REDACTED]';

/** Messages that echo a value cut it to this many characters (refs.ts, env.ts and run.ts). */
export const ECHO_LENGTH = 40;

/** Every secret replaced: as given, JSON-escaped, and cut the way messages echo a long value. */
function scrub(text: string, secrets: ReadonlySet<string>): string {
  const forms = [...secrets]
    .filter((s) => s.length >= 4)
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1), s.slice(0, ECHO_LENGTH)])
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of forms) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * A Printer over `output`. Secrets are scrubbed before controls are escaped, so that a secret is
 * matched in the form it was given. `secrets` is read at each write: the configured token joins
 * it once the configuration is loaded.
 */
export function printer(output: Output, secrets: ReadonlySet<string>): Printer {
  return (text) =>
    new Promise((resolve, reject) => {
      output.write(escapeControls(scrub(text, secrets)), (error) => {
        if (error) reject(new OutputError(error));
        else resolve();
      });
    });
}

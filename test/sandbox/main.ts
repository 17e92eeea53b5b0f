/**
 * `npm run sandbox`: the bot in a scripted session against local stand-ins, no tokens needed.
 * Exit status 0 when every step went as expected, 1 otherwise (the reason on stderr), 130 on a
 * second Ctrl-C.
 */
import { runSandbox } from './session.js';

const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  process.stderr.write('\nsandbox: interrupted, shutting down (Ctrl-C again to quit at once)\n');
  interrupt.abort(new Error('interrupted'));
});

try {
  await runSandbox({ out: process.stdout, signal: interrupt.signal });
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`sandbox failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
// Everything is closed by now; should a stray handle keep the process up, do not hang on it.
setTimeout(() => process.exit(), 3_000).unref();

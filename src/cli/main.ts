#!/usr/bin/env node
/** The `directory` binary: wires the process to run(). */
import { readEnvironment } from '../config/env.js';
import { run } from './run.js';

// run() learns of a failed write through the write's callback and says so once (see output.ts);
// the stream's 'error' event would otherwise end the process with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', () => undefined);
}

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: readEnvironment(),
});

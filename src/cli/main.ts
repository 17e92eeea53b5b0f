#!/usr/bin/env node
/** The `directory` binary: wires the process to run(). */
import { readEnvironment } from '../config/env.js';
import { run } from './run.js';

// A closed pipe (`directory bots 1 | head -1`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: readEnvironment(),
});

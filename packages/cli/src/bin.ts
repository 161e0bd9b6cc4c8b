#!/usr/bin/env node
// The `turnkit` binary.
import { main } from './program.js';

// `turnkit run x --json | head` closes stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

/** Resolves once everything written to `stream` so far has been handed to the system. */
const flushed = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()));

process.exitCode = await main(process.argv);
// The outcome is printed: exit now, not when a tool or model that ignored its cancellation (after
// Ctrl+C or SIGTERM) or a finished race lets the event loop empty.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit();

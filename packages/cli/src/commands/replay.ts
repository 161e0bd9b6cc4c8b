// `turnkit replay FILE`: feeds a saved trace's events through `step` again (@turnkit/testing's
// replay) and says whether every state and effect list is identical to the recording.

import { resolve } from 'node:path';
import { replay } from '@turnkit/testing';
import type { Trace } from '@turnkit/core';
import pc from 'picocolors';
import { oneLine, UsageError } from '../errors.js';
import { safeText } from '../safe-text.js';
import { mustBeFile } from '../scenario.js';
import { readFile } from 'node:fs/promises';

/** Replays the trace in `file` (a `--trace` file or `--json` NDJSON); resolves to the exit code. */
export async function replayCommand(file: string): Promise<number> {
  const path = resolve(file);
  await mustBeFile(path, file, 'trace');
  const trace = parseTrace(await readFile(path, 'utf8'), file);
  let report;
  try {
    report = replay(trace);
  } catch (error) {
    throw new UsageError(`${file} could not be replayed: ${oneLine(error)}`);
  }
  if (report.ok) {
    process.stdout.write(
      `${pc.green(pc.bold('✔ identical'))}: replayed ${report.steps} steps of ${safeText(file)} through step; every state and effect list matches the recording.\n`,
    );
    return 0;
  }
  process.stdout.write(`${pc.red(pc.bold('✖ different'))}: ${safeText(report.difference.message)}\n`);
  return 1;
}

/** A trace from the JSON of `--trace` ({ initial, entries }) or the NDJSON lines of `--json`. */
function parseTrace(text: string, file: string): Trace {
  const notTrace = (why: string): never => {
    throw new UsageError(`${file} is not a turnkit trace (${why}); write one with \`turnkit run SCENARIO --trace ${file}\`.`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = fromNdjson(text, notTrace);
  }
  const t = value as Partial<Trace> | null;
  if (t === null || typeof t !== 'object') return notTrace('expected a JSON object');
  if (t.initial === null || typeof t.initial !== 'object') return notTrace('it has no `initial` state');
  if (!Array.isArray(t.entries)) return notTrace('it has no `entries` array');
  for (const [index, entry] of t.entries.entries()) {
    const e = entry as Partial<Trace['entries'][number]> | null;
    if (e === null || typeof e !== 'object' || e.event === undefined || e.state === undefined || !Array.isArray(e.effects)) {
      return notTrace(`entry ${index} needs event, state and effects`);
    }
  }
  return t as Trace;
}

function fromNdjson(text: string, notTrace: (why: string) => never): Trace {
  let initial: unknown;
  const entries: unknown[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let record: { kind?: unknown; state?: unknown; event?: unknown; effects?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      return notTrace(`line ${index + 1} is neither JSON nor part of NDJSON`);
    }
    if (record.kind === 'initial') initial = record.state;
    else if (record.kind === 'step') entries.push({ event: record.event, state: record.state, effects: record.effects });
  }
  return { initial, entries } as Trace;
}

// Crash points: a test seam for proving recovery. With TURNKIT_STORE_CRASH_AT=<point>[:<n>] set,
// the process kills itself with SIGKILL the n-th time (default 1) it reaches that point, as a
// power cut or an OOM kill would; unset (always, outside crash tests), every point does nothing.
// The points are the boundaries where a crash can lose or repeat work:
//
//   claimed               a worker took a turn's lease, before it wrote anything
//   dispatching_persisted a worker wrote the `dispatching` checkpoint, before any tool started
//   tool_running          a tool started and was still running 50 ms later
//   tool_result_written   a tool's result was journaled, before the state that includes it
//   before_commit         a worker is about to write a checkpoint (state, messages, inbox rows)
//   decision_written      `store.decide` committed a decision, before it returned

export const CRASH_POINTS = [
  'claimed',
  'dispatching_persisted',
  'tool_running',
  'tool_result_written',
  'before_commit',
  'decision_written',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

/** The environment variable the seam reads. */
export const CRASH_ENV = 'TURNKIT_STORE_CRASH_AT';

/** How long a tool runs before the `tool_running` point fires. */
export const TOOL_RUNNING_MS = 50;

interface Armed {
  readonly point: CrashPoint;
  readonly nth: number;
  seen: number;
}

let armed: Armed | null | undefined;

/** Reads TURNKIT_STORE_CRASH_AT; a value that names no point is an error naming the points. */
export function armedCrash(): Armed | null {
  if (armed !== undefined) return armed;
  const value = process.env[CRASH_ENV];
  if (value === undefined || value === '') return (armed = null);
  const match = /^([a-z_]+)(?::([1-9]\d{0,5}))?$/.exec(value);
  const point = match?.[1] as CrashPoint | undefined;
  if (match === null || point === undefined || !CRASH_POINTS.includes(point)) {
    throw new Error(
      `${CRASH_ENV}=${JSON.stringify(value)} names no crash point; use one of ${CRASH_POINTS.join(', ')}, optionally with :N.`,
    );
  }
  return (armed = { point, nth: Number(match[2] ?? 1), seen: 0 });
}

/** True when `point` is the armed one (so the caller may arrange to reach it). */
export function crashArmed(point: CrashPoint): boolean {
  return armedCrash()?.point === point;
}

/** Kills this process with SIGKILL when `point` is armed and reached for the n-th time. */
export function crashPoint(point: CrashPoint): void {
  const spec = armedCrash();
  if (spec === null || spec.point !== point) return;
  spec.seen += 1;
  if (spec.seen < spec.nth) return;
  // stderr is synchronous on pipes and files: the line is out before the signal.
  process.stderr.write(`turnkit store: crash point ${point} reached (${CRASH_ENV}); killing this process with SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
}

// Traces: every transition of a turn as plain JSON, and `replay`, which feeds the recorded events
// through `step` again and reports the first place where the result differs. No model or tool runs.

import { step, type Effect, type Trace, type TraceEntry, type TurnEvent, type TurnState } from '@turnkit/core';

export type { Trace, TraceEntry };

/** Collects a trace from any interpreter that reports transitions through an `onStep(entry)` option. */
export interface TraceRecorder {
  readonly onStep: (entry: TraceEntry) => void;
  /** The trace so far, as a JSON copy. */
  trace(): Trace;
}

/**
 * A recorder for a turn that starts at `initial`.
 *
 * @example
 * const recorder = recordTrace(state);
 * // … drive the turn, calling recorder.onStep({ event, state, effects }) after each step …
 * expect(replay(recorder.trace()).ok).toBe(true);
 */
export function recordTrace(initial: TurnState): TraceRecorder {
  const entries: TraceEntry[] = [];
  return {
    onStep: (entry) => entries.push(toJson(entry)),
    trace: () => toJson({ initial, entries }),
  };
}

/** Where a replay first differs from the recording. */
export interface ReplayDifference {
  /** Index of the entry whose replayed step differs. */
  readonly index: number;
  readonly event: TurnEvent;
  readonly part: 'state' | 'effects';
  /** A path into that part, such as `status` or `[1].message.content`. */
  readonly path: string;
  readonly recorded: unknown;
  readonly replayed: unknown;
  readonly message: string;
}

export type ReplayReport =
  | { readonly ok: true; readonly steps: number }
  | { readonly ok: false; readonly steps: number; readonly difference: ReplayDifference };

/**
 * Feeds the recorded events through `step` from the recorded initial state and compares each
 * state and effect list with the recording. Reports the first difference (a changed reducer, a
 * hand-edited trace); the replay goes on from the recorded state, never the replayed one.
 */
export function replay(trace: Trace): ReplayReport {
  let state = toJson(trace.initial);
  for (const [index, entry] of trace.entries.entries()) {
    const [next, effects] = step(state, entry.event);
    for (const part of ['state', 'effects'] as const) {
      const recorded = part === 'state' ? entry.state : currentEffects(entry.effects);
      const replayed = toJson(part === 'state' ? next : effects);
      const diff = firstDifference(toJson(recorded), replayed, '');
      if (diff !== null) {
        const message =
          `Replay differs at entry ${index} (event '${entry.event.type}') in ${part}${diff.path === '' ? '' : ` at ${diff.path}`}: ` +
          `recorded ${show(diff.recorded)}, replayed ${show(diff.replayed)}.`;
        return {
          ok: false,
          steps: index,
          difference: {
            index,
            event: entry.event,
            part,
            path: diff.path,
            recorded: diff.recorded,
            replayed: diff.replayed,
            message,
          },
        };
      }
    }
    state = toJson(entry.state);
  }
  return { ok: true, steps: trace.entries.length };
}

/**
 * Effect names a recording may hold from an earlier release, and today's name for each: a trace
 * recorded when the model call was the `call_model` effect replays against today's `call_llm`.
 */
const RENAMED_EFFECTS: ReadonlyMap<string, Effect['type']> = new Map([['call_model', 'call_llm']]);

function currentEffects(effects: readonly Effect[]): readonly Effect[] {
  return effects.map((effect) => {
    const renamed = RENAMED_EFFECTS.get((effect as { type: string }).type);
    return renamed === undefined ? effect : ({ ...effect, type: renamed } as Effect);
  });
}

type Diff = { path: string; recorded: unknown; replayed: unknown };

function firstDifference(recorded: unknown, replayed: unknown, path: string): Diff | null {
  if (Object.is(recorded, replayed)) return null;
  if (
    recorded === null ||
    replayed === null ||
    typeof recorded !== 'object' ||
    typeof replayed !== 'object' ||
    Array.isArray(recorded) !== Array.isArray(replayed)
  ) {
    return { path, recorded, replayed };
  }
  if (Array.isArray(recorded) && Array.isArray(replayed)) {
    for (let i = 0; i < Math.max(recorded.length, replayed.length); i += 1) {
      const d = firstDifference(recorded[i], replayed[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  const a = recorded as Record<string, unknown>;
  const b = replayed as Record<string, unknown>;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = firstDifference(a[key], b[key], path === '' ? key : `${path}.${key}`);
    if (d !== null) return d;
  }
  return null;
}

function show(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function toJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

// The execution wrapper: user code around each tool execution (a tracer's span, a timer). The
// tool runs at most once whatever the wrapper does, and its outcome is the one the dispatcher
// keeps: a wrapper can observe a call, never change or lose its result.

import { CANCELLED, unlessAborted } from './abort.js';
import { errorMessage } from '@turnkit/core/internal';
import { quote } from './text.js';
import type { ExecutionOutcome, ExecutionWrapper, ToolExecution } from './types.js';

/** Why the tool did not run: the outcome of a wrapper that failed (or returned) before `run()`. */
function notRun(execution: ToolExecution, why: string, kind: 'internal' | 'cancelled'): ExecutionOutcome {
  return {
    isError: true,
    output:
      kind === 'cancelled'
        ? `cancelled: the turn was cancelled before ${quote(execution.tool)} ran.`
        : `Call to ${quote(execution.tool)} not run: the execution wrapper ${why}. The tool did not run; fix the wrapper (it must call run() once).`,
    errorKind: kind,
    attempts: 0,
    durationMs: 0,
  };
}

/**
 * Runs `run` inside `wrapper` (or alone without one) and gives run()'s outcome. `run` is called
 * at most once: a second call gets the first call's promise, and a call after the wrapper settled
 * runs nothing. A wrapper cut off by the turn's cancellation is not waited for.
 */
export async function runWrapped(
  wrapper: ExecutionWrapper | undefined,
  execution: ToolExecution,
  run: () => Promise<ExecutionOutcome>,
  signal: AbortSignal,
): Promise<ExecutionOutcome> {
  if (wrapper === undefined) return run();
  let started: Promise<ExecutionOutcome> | undefined;
  let closed = false;
  const once = (): Promise<ExecutionOutcome> => {
    if (started === undefined && closed)
      return Promise.resolve(notRun(execution, 'called run() after it had settled', 'internal'));
    started ??= run();
    return started;
  };
  let why = 'returned without calling run()';
  try {
    const settled = await unlessAborted(() => wrapper(execution, once), signal);
    if (settled === CANCELLED && started === undefined) why = 'cancelled';
  } catch (error) {
    why = `failed before calling run() (${errorMessage(error)})`;
  }
  closed = true;
  if (started !== undefined) return started;
  return why === 'cancelled' ? notRun(execution, why, 'cancelled') : notRun(execution, why, 'internal');
}

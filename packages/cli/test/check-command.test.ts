import type { StepFunction } from '@turnkit/check';
import { step } from '@turnkit/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkCommand } from '../src/commands/check.ts';

/** A deliberate bug (as in packages/check/test/mutation.test.ts): parked calls run without a decision. */
const executesParked: StepFunction = (state, event) => {
  const [next, effects] = step(state, event);
  if (!(state.status === 'dispatching' && next.status === 'awaiting_approval')) return [next, effects];
  if (next.batch === null) return [next, effects];
  const calls = next.batch.parked.map((p) => p.call);
  const decisions = Object.fromEntries(calls.map((c) => [c.id, { type: 'approve' } as const]));
  return [
    { ...next, status: 'executing_approved', batch: { ...next.batch, decisions } },
    [...effects, { type: 'execute_approved', calls }],
  ];
};

const OPTIONS = { maxIterations: 2, loopThreshold: 2, repairs: 1, depth: 30 };

function captureStdout(): () => string {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  return () => out;
}

describe('checkCommand', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints the violations of a broken step and returns exit code 1', async () => {
    const output = captureStdout();
    const code = await checkCommand({ ...OPTIONS, step: executesParked });
    const out = output().replace(/\u001b\[[0-9;]*m/g, '');
    expect(code).toBe(1);
    const violations = Number(/^violations\s+(\d+)$/m.exec(out)?.[1]);
    expect(violations).toBeGreaterThan(0);
    expect(out).toMatch(/^✖ invariant 8: .*executed without an approve decision/m);
    expect(out).toMatch(/^ {4}path: .+ → .+/m);
    expect(out).not.toContain('no invariant was violated');
  });

  it('returns 0 for the real step with the same options', async () => {
    const output = captureStdout();
    const code = await checkCommand(OPTIONS);
    expect(code).toBe(0);
    expect(output()).toContain('no invariant was violated');
  });
});

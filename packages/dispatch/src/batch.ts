// A whole batch through the pipeline (`dispatch`, and `executeApproved` with `approved`): every
// call classified (stages 1–5) and admitted (stage 6) in call order, the decision records emitted
// in one place, in call order, after the whole batch is admitted; then the admitted calls run
// (stages 7–9), at most `concurrency` at once, each announced and audited as it finishes.

import type { ParkedCall, ToolResult } from '@turnkit/core';
import type { AnyTool } from './config.js';
import type { Turn } from './context.js';
import { admit, classify, runReserved, type Pipeline, type Seen } from './pipeline.js';
import { callRecord, decisionRecord, emitRecords } from './records.js';
import type { DispatchOutcome, Verdict } from './types.js';

/** Calls `onResult` without letting it lose a result or break the batch. */
function announce(turn: Turn, result: ToolResult): void {
  try {
    turn.onResult?.(result);
  } catch {
    // An observer must not be able to lose a result or break the batch.
  }
}

/**
 * The whole pipeline for a batch (`dispatch`; `executeApproved` with `approved`): classifies in
 * call order, admits in call order, emits the records, then runs up to `concurrency` at once.
 */
export async function dispatchBatch(
  p: Pipeline,
  list: readonly unknown[],
  turn: Turn,
  approved: boolean,
): Promise<DispatchOutcome> {
  const count = list.length;
  const sent: unknown[] = [];
  const verdicts: Verdict[] = [];
  for (let i = 0; i < count; i++) {
    const seen: Seen = {};
    verdicts.push(await classify(p, list[i], turn, approved, seen)); //                    1–5
    sent.push(seen.input);
  }
  for (let i = 0; i < count; i++) verdicts[i] = admit(p, verdicts[i] as Verdict); //            6
  emitRecords(p.config.onDecision, verdicts.map(decisionRecord));
  const slots: (ToolResult | undefined)[] = [];
  const parked: ParkedCall[] = [];
  const jobs: number[] = [];
  for (let i = 0; i < count; i++) {
    const verdict = verdicts[i] as Verdict;
    slots.push(verdict.kind === 'deny' ? verdict.result : undefined);
    if (verdict.kind === 'deny') {
      // One audit record per call with a result: denied now, executed when it has run.
      audit(p, turn, approved, verdict, sent[i], verdict.result, 0, 0);
      announce(turn, verdict.result);
    } else if (verdict.kind === 'execute') jobs.push(i);
    // An approved batch never parks (the person decided); parking is the dispatch path.
    else {
      const tool = p.config.tools.get(verdict.call.name);
      const expiresAfterMs = tool?.approvalTimeoutMs ?? p.config.approvalTimeoutMs;
      parked.push({
        call: verdict.call,
        input: verdict.input,
        reason: verdict.reason,
        ...(expiresAfterMs === undefined ? {} : { expiresAfterMs }),
      });
    }
  }
  // Stages 7–9: up to `concurrency` workers, each running the next admitted call until none is left.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = jobs[next++] as number;
      const verdict = verdicts[index] as Extract<Verdict, { kind: 'execute' }>;
      const { call, input } = verdict;
      const ran = await runReserved(p, p.config.tools.get(call.name) as AnyTool, call, input, turn); // 7–9
      slots[index] = ran.result;
      audit(p, turn, approved, verdict, input, ran.result, ran.attempts, ran.durationMs);
      announce(turn, ran.result);
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = Math.min(p.config.concurrency, jobs.length); i > 0; i--) workers.push(worker());
  // A worker never rejects (runReserved, audit and announce do not throw): waiting for each in turn is waiting for all.
  for (const running of workers) await running;
  const results: ToolResult[] = [];
  for (const slot of slots) if (slot !== undefined) results.push(slot);
  return { results, parked };
}

/** A call's audit record, to the dispatcher's `onRecord` and the caller's. */
function audit(
  p: Pipeline,
  turn: Turn,
  approved: boolean,
  verdict: Verdict,
  input: unknown,
  result: ToolResult,
  attempts: number,
  durationMs: number,
): void {
  const decision = verdict.kind !== 'execute' ? 'deny' : approved ? 'user_approved' : 'allow';
  const call = { id: result.callId, name: result.name };
  const facts = { call, input, decision, source: verdict.source, result, attempts, durationMs } as const;
  const record = callRecord(turn.turnId, turn.context, facts);
  emitRecords(p.config.onRecord, [record]);
  emitRecords(turn.onRecord, [record]);
}

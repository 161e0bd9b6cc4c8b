import { buildModelRequest, cancelPreempts, createTurn, decisionsTaken, dispatchOutcomeEvent, isBlocking, step, toTurnError } from '@turnkit/core';
import type { ApprovalDecision, Effect, JsonValue, Message, TurnEvent } from '@turnkit/core';
import type { ConformanceResult, ConformanceRunOptions } from '@turnkit/testing';

/** A whole interpreter: perform effects, feed back one event per blocking effect, stop at done. */
export async function runMinimal(o: ConformanceRunOptions): Promise<ConformanceResult> {
  const transcript: Message[] = [...(o.system === undefined ? [] : [{ role: 'system' as const, content: o.system }]), ...(o.transcript ?? [])];
  const loopExemptTools = [...(o.limits?.loopExemptTools ?? []), ...o.tools.loopExemptTools()];
  let [state, effects] = step(createTurn({ id: o.id, limits: { ...o.limits, loopExemptTools } }), { type: 'start', input: o.input });
  let asked = false; // approve is asked once per parked batch; what it leaves undecided expires
  for (;;) {
    for (const effect of effects) if (effect.type === 'append') transcript.push(effect.message);
    const last = effects.at(-1);
    const text = transcript.findLast((m) => m.role === 'assistant')?.content ?? '';
    if (last?.type === 'done') {
      const [out, base] = [last.outcome, { output: null, text, state, transcript }];
      if (out.status === 'stopped') return { ...base, status: 'stopped', stopReason: out.stopReason, output: out.output };
      return out.status === 'failed' ? { ...base, status: 'failed', error: out.error } : { ...base, status: 'cancelled' };
    }
    let event: TurnEvent;
    if (last === undefined || !isBlocking(last)) {
      const parked = state.batch?.parked ?? []; // the calls waiting for a decision
      if (o.approve === undefined) return { status: 'suspended', output: null, text, state, transcript, pending: parked };
      const decisions: Record<string, ApprovalDecision> = asked ? {} : await o.approve(parked, { turnId: o.id });
      [event, asked] = [asked ? { type: 'approval_expired' } : { type: 'approvals_decided', decisions }, true];
    } else [event, asked] = [await perform(last, o, transcript), false];
    // Results of tools that ran are recorded before a cancel (core's rule says which events).
    if (o.signal?.aborted && cancelPreempts(event)) event = { type: 'cancel', reason: String(o.signal.reason) };
    // The dispatcher records the decisions core takes (audit records, "approve and remember" grants of this turn).
    for (const t of decisionsTaken(state, event)) o.tools.recordDecision(t.call, t.expired ? { type: 'expired' } : t.decision, { turnId: o.id });
    [state, effects] = step(state, event);
  }
}

async function perform(effect: Effect, o: ConformanceRunOptions, transcript: Message[]): Promise<TurnEvent> {
  const ctx = { turnId: o.id, ...(o.signal ? { signal: o.signal } : {}) };
  switch (effect.type) {
    case 'call_llm':
      try {
        await new Promise((wake) => setTimeout(wake, effect.request.delayMs ?? 0)); // core's wait before a retry
        const request = buildModelRequest(effect.request, transcript.slice(), o.tools.toolSpecs());
        return { type: 'model_responded', response: await o.model.generate(request, { signal: o.signal ?? new AbortController().signal }) };
      } catch (e) {
        return { type: 'model_failed', error: toTurnError(e) }; // core decides whether to retry
      }
    case 'dispatch_tools': return dispatchOutcomeEvent(await o.tools.dispatch(effect.calls, ctx));
    case 'execute_approved': return { type: 'approved_tools_completed', results: await o.tools.executeApproved(effect.calls, ctx) };
    case 'check_output': {
      if (o.output === undefined) return { type: 'output_accepted', output: effect.candidate };
      let json: unknown = null; // text that is not JSON is checked as null, so the schema rejects it
      try { json = JSON.parse(effect.candidate); } catch {}
      const parsed = o.output.safeParse(json);
      if (parsed.success) return { type: 'output_accepted', output: parsed.data as JsonValue };
      return { type: 'output_rejected', reason: `Reply with JSON only, fixing: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}` };
    }
    default: return { type: 'compacted' };
  }
}

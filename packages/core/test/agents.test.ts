// The multi-agent rows of the turn contract (docs/agents.md): a `transfer_task` result starts a
// child turn whose effects come out wrapped (`child`), its end is the call's result and its usage
// the parent's; decisions and cancels reach the child through the parent; `handoff` and
// `change_model` change the active agent and the model for the rest of the turn.
import { describe, expect, it } from 'vitest';
import {
  createTurn,
  decisionsTaken,
  isBlocking,
  parseTurnState,
  resume,
  step,
  undecided,
  type Effect,
  type ToolCall,
  type ToolResult,
  type TurnState,
} from '@turnkit/core';
import { activeTurn, type AgentAction } from '@turnkit/core/internal';

const transfer = (task: string, agent = 'researcher', limits = {}): AgentAction => ({ type: 'transfer', agent, task, limits });
const call = (id: string, name: string, input: unknown = {}): ToolCall => ({ id, name, input: input as never });
const ok = (c: ToolCall, output: unknown, action?: AgentAction): ToolResult =>
  action === undefined
    ? { callId: c.id, name: c.name, output: output as never, isError: false }
    : { callId: c.id, name: c.name, output: output as never, isError: false, action };
const text = (t: string, usage = { inputTokens: 10, outputTokens: 5 }) => ({
  type: 'model_responded',
  response: { text: t, toolCalls: [], usage },
});
const calls = (...cs: ToolCall[]) => ({ type: 'model_responded', response: { text: '', toolCalls: cs } });

/** Steps `state` through `events` and returns the last state and every effect on the way. */
function run(state: TurnState, ...events: unknown[]): [TurnState, Effect[]] {
  const all: Effect[] = [];
  let current = state;
  for (const event of events) {
    const [next, effects] = step(current, event);
    all.push(...effects);
    current = next;
  }
  return [current, all];
}

const toChild = (event: unknown, callId = 't1') => ({ type: 'child', callId, event });

/** A supervisor whose first reply asks for `transfer_task` (and `search`); the dispatcher has answered it. */
function delegating(limits = {}): [TurnState, Effect[]] {
  const t = call('t1', 'transfer_task', { agent: 'researcher', task: 'find X' });
  const s = call('s1', 'search', { q: 'x' });
  return run(createTurn({ id: 'sup', agent: 'supervisor', limits }), { type: 'start', input: 'help' }, calls(t, s), {
    type: 'tools_completed',
    results: [ok(t, 'delegated', transfer('find X')), ok(s, 'found')],
  });
}

describe('transfer_task: a child turn', () => {
  it('a transfer result starts the child turn: the parent is delegating, the child effects come wrapped, the call_llm names the agent', () => {
    const [state, effects] = delegating();
    expect(state.status).toBe('delegating');
    expect(state.agents?.child?.id).toBe('sup/t1');
    expect(state.agents?.delegations.map((d) => d.callId)).toEqual(['t1']);
    expect(state.batch?.held.map((r) => r.callId)).toEqual(['s1']);
    const wrapped = effects.filter((e) => e.type === 'child');
    expect(wrapped).toEqual([
      {
        type: 'child',
        callId: 't1',
        agent: 'researcher',
        effect: { type: 'append', message: { role: 'user', content: 'find X' } },
      },
      {
        type: 'child',
        callId: 't1',
        agent: 'researcher',
        effect: { type: 'emit', notice: { name: 'turn_started', data: { id: 'sup/t1' } } },
      },
      {
        type: 'child',
        callId: 't1',
        agent: 'researcher',
        effect: { type: 'emit', notice: { name: 'iteration', data: { iteration: 1 } } },
      },
      {
        type: 'child',
        callId: 't1',
        agent: 'researcher',
        effect: { type: 'call_llm', request: { iteration: 1, final: false }, agent: 'researcher' },
      },
    ]);
    expect(isBlocking(wrapped[3] as Effect)).toBe(true);
    // No result of the batch is appended while the child runs.
    expect(effects.some((e) => e.type === 'append' && e.message.role === 'tool')).toBe(false);
    // A delegating state reads back as it is.
    expect(parseTurnState(JSON.stringify(state))).toEqual(state);
  });

  it("the child's end is the call's result, in call order, after the child ended; its usage is the parent's", () => {
    const [state] = delegating();
    const [next, effects] = run(state, toChild(text('X is 42')), toChild({ type: 'output_accepted', output: 'X is 42' }));
    const tail = effects.filter((e) => e.type !== 'child');
    expect(tail).toEqual([
      {
        type: 'append',
        message: { role: 'tool', result: { callId: 't1', name: 'transfer_task', output: 'X is 42', isError: false } },
      },
      { type: 'append', message: { role: 'tool', result: { callId: 's1', name: 'search', output: 'found', isError: false } } },
      { type: 'emit', notice: { name: 'steering', data: { round: 1 } } },
      { type: 'persist', checkpoint: 'boundary' },
      { type: 'compact', info: { round: 1, usage: next.usage } },
    ]);
    // The child's done comes wrapped, and does not block the parent.
    const done = effects.find((e) => e.type === 'child' && e.effect.type === 'done') as Effect;
    expect(isBlocking(done)).toBe(false);
    expect(next.status).toBe('steering');
    expect(next.agents).toEqual({ agent: 'supervisor', model: null, delegations: [], child: null });
    expect(next.usage).toMatchObject({ modelCalls: 2, toolCalls: 2, inputTokens: 10, outputTokens: 5 });
  });

  it('a child that fails is an error result naming the agent; the parent goes on', () => {
    const [state] = delegating();
    const [next, effects] = run(state, toChild({ type: 'model_failed', error: { kind: 'provider_error', message: 'down' } }));
    const result = effects.find((e) => e.type === 'append' && e.message.role === 'tool');
    expect(result).toEqual({
      type: 'append',
      message: {
        role: 'tool',
        result: {
          callId: 't1',
          name: 'transfer_task',
          output: "The agent 'researcher' failed: down",
          isError: true,
          errorKind: 'tool_error',
        },
      },
    });
    expect(next.status).toBe('steering');
  });

  it("the child's budget is what the parent has left, and a parent over budget after the child stops", () => {
    const [state] = delegating({ budget: { maxModelCalls: 3, maxOutputTokens: 8 } });
    expect(state.agents?.child?.limits.budget).toEqual({ maxModelCalls: 2, maxOutputTokens: 8 });
    const [next] = run(state, toChild(text('long answer', { inputTokens: 1, outputTokens: 9 })));
    // The child stopped on its budget; its usage took the parent past its own.
    expect(next.status).toBe('stopped');
    expect(next.outcome).toEqual({ status: 'stopped', stopReason: 'budget_exhausted', output: null });
    expect(next.usage.outputTokens).toBe(9);
  });

  it('cancel ends the whole tree: the child is cancelled first, every open call of both gets a result', () => {
    const [state] = delegating();
    const r = call('r1', 'read');
    const [childBusy] = run(state, toChild(calls(r)));
    expect(childBusy.agents?.child?.status).toBe('dispatching');
    const [next, effects] = step(childBusy, { type: 'cancel', reason: 'stop' });
    expect(next.status).toBe('cancelled');
    const childResults = effects.filter((e) => e.type === 'child' && e.effect.type === 'append');
    expect(childResults).toEqual([
      {
        type: 'child',
        callId: 't1',
        agent: 'researcher',
        effect: {
          type: 'append',
          message: {
            role: 'tool',
            result: {
              callId: 'r1',
              name: 'read',
              output: 'cancelled: the turn was cancelled before this call finished.',
              isError: true,
              errorKind: 'cancelled',
            },
          },
        },
      },
    ]);
    const parentResults = effects
      .filter((e) => e.type === 'append')
      .map((e) => (e.type === 'append' && e.message.role === 'tool' ? e.message.result.callId : ''));
    expect(parentResults).toEqual(['t1', 's1']);
    expect(effects.at(-1)).toEqual({ type: 'done', outcome: { status: 'cancelled', reason: 'stop' } });
  });

  it("a child's parked call is visible from the parent (with the agent path) and decided through it; nothing else re-runs", () => {
    const [state] = delegating();
    const d = call('d1', 'delete', { path: '/tmp' });
    const [parked, parkEffects] = run(
      state,
      toChild(calls(d)),
      toChild({ type: 'tools_parked', held: [], parked: [{ call: d }] }),
    );
    expect(parkEffects.some((e) => isBlocking(e))).toBe(true); // the child's dispatch_tools, answered above
    expect(undecided(parked)).toEqual([{ call: d, input: d.input, agentPath: ['supervisor', 'researcher'] }]);
    expect(activeTurn(parked)).toMatchObject({ agentPath: ['supervisor', 'researcher'], callPath: ['t1'] });
    const decide = { type: 'approvals_decided', decisions: { d1: { type: 'approve' } } };
    expect(decisionsTaken(parked, decide)).toEqual([{ call: d, input: d.input, decision: { type: 'approve' } }]);
    const [next, effects] = step(parked, decide);
    expect(effects.filter((e) => e.type !== 'child')).toEqual([]);
    const inner = effects.map((e) => (e.type === 'child' ? e.effect.type : e.type));
    expect(inner).toEqual(['persist', 'execute_approved']);
    expect(next.agents?.child?.status).toBe('executing_approved');
  });

  it('resume of a delegating parent resumes its child (a durable interpreter re-issues the child call)', () => {
    const [state] = delegating();
    const [same, effects] = resume(parseTurnState(JSON.stringify(state)), { durable: true });
    expect(effects).toEqual([
      {
        type: 'child',
        callId: 't1',
        agent: 'researcher',
        effect: { type: 'call_llm', request: { iteration: 1, final: false }, agent: 'researcher' },
      },
    ]);
    expect(same.agents?.child?.usage.modelCalls).toBe(2);
  });

  it('a child event for another call fails the turn, and the child is cancelled with it', () => {
    const [state] = delegating();
    const [next, effects] = step(state, toChild(text('hi'), 'nope'));
    expect(next.status).toBe('failed');
    expect(effects.some((e) => e.type === 'child' && e.effect.type === 'done')).toBe(true);
  });
});

describe('handoff and change_model', () => {
  const h = call('h1', 'handoff', { agent: 'writer' });
  const m = call('m1', 'change_model', { model: 'big' });

  it("handoff: the next model call is the new agent's, its system prompt is appended, its limits apply where stricter", () => {
    const handoff: AgentAction = {
      type: 'handoff',
      agent: 'writer',
      system: 'You write.',
      limits: { maxIterations: 3, budget: { maxToolCalls: 9 } },
    };
    const [state, effects] = run(
      createTurn({ id: 't', agent: 'supervisor', limits: { maxIterations: 5 } }),
      { type: 'start' },
      calls(h),
      { type: 'tools_completed', results: [ok(h, 'Handed off to writer.', handoff)] },
      { type: 'compacted' },
    );
    expect(effects.filter((e) => e.type === 'append').map((e) => (e.type === 'append' ? e.message : null))).toEqual([
      { role: 'assistant', content: '', toolCalls: [h] },
      { role: 'tool', result: { callId: 'h1', name: 'handoff', output: 'Handed off to writer.', isError: false } },
      { role: 'system', content: 'You write.' },
    ]);
    expect(effects.at(-1)).toEqual({ type: 'call_llm', request: { iteration: 2, final: false }, agent: 'writer' });
    expect(state.agents?.agent).toBe('writer');
    expect(state.limits.maxIterations).toBe(3);
    expect(state.limits.budget).toEqual({ maxToolCalls: 9 });
  });

  it('a handoff to stricter limits than the turn has used: the limit counts as reached, and the state reads back', () => {
    const handoff: AgentAction = { type: 'handoff', agent: 'writer', limits: { maxIterations: 1, budget: { maxModelCalls: 1 } } };
    const first = call('a1', 'search');
    const [state, effects] = run(
      createTurn({ id: 't', agent: 'supervisor', limits: { maxIterations: 5 } }),
      { type: 'start' },
      calls(first),
      { type: 'tools_completed', results: [ok(first, 'x')] },
      { type: 'compacted' },
      calls(h),
      { type: 'tools_completed', results: [ok(h, 'Handed off to writer.', handoff)] },
    );
    expect(state.limits.maxIterations).toBe(2);
    expect(state.limits.budget.maxModelCalls).toBe(2);
    expect(parseTurnState(JSON.stringify(state))).toEqual(state);
    const [stoppedState] = step(state, { type: 'compacted' });
    expect(stoppedState.outcome).toEqual({ status: 'stopped', stopReason: 'budget_exhausted', output: null });
    expect(effects.some((e) => e.type === 'done')).toBe(false);
  });

  it('change_model: every later call uses the model; a one-shot override wins once; a forced final call keeps the model', () => {
    const [state, effects] = run(
      createTurn({ id: 't', agent: 'a', limits: { maxIterations: 2 } }),
      { type: 'start' },
      calls(m),
      { type: 'tools_completed', results: [ok(m, 'Now on big.', { type: 'change_model', model: 'big' })] },
      { type: 'compacted' },
      calls(call('x1', 'x')),
      { type: 'tools_completed', results: [{ ...ok(call('x1', 'x'), 1), modelOverride: 'huge' }] },
      { type: 'compacted' },
    );
    const requests = effects.flatMap((e) => (e.type === 'call_llm' ? [e.request] : []));
    expect(requests).toEqual([
      { iteration: 1, final: false },
      { iteration: 2, final: false, modelOverride: 'big' },
      { iteration: 3, final: true, modelOverride: 'big' },
    ]);
    expect(state.agents?.model).toBe('big');
  });

  it('an action on an error result changes nothing', () => {
    const [state] = run(createTurn({ id: 't', agent: 'a' }), { type: 'start' }, calls(m), {
      type: 'tools_completed',
      results: [{ ...ok(m, 'denied', { type: 'change_model', model: 'big' }), isError: true, errorKind: 'denied' }],
    });
    expect(state.agents?.model).toBe(null);
  });

  it('a malformed action fails the turn as an unexpected event naming the field', () => {
    const [state] = run(createTurn({ id: 't', agent: 'a' }), { type: 'start' }, calls(m), {
      type: 'tools_completed',
      results: [ok(m, 'x', { type: 'change_model', model: '' } as AgentAction)],
    });
    expect(state.outcome).toMatchObject({ status: 'failed', error: { kind: 'unexpected_event' } });
    expect(JSON.stringify(state.outcome)).toContain('results[0].action.model is empty');
  });
});

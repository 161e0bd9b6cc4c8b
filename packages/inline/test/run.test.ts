import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Effect, Notice } from '@turnkit/core';
import { createDispatcher, defineTool, type DecisionRecord } from '@turnkit/dispatch';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { call, fail, replay, scriptedModel, text, toolCalls, transcriptLines, type Trace } from '@turnkit/testing';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `deployed ${service}`,
});
const search = defineTool({
  name: 'search',
  description: 'Searches.',
  input: z.object({ q: z.string() }),
  loopExempt: true,
  execute: () => 'nothing',
});

const retryable = (message: string) => Object.assign(new Error(message), { retryable: true });

describe('runTurn', () => {
  it('accepts a list of tool definitions and returns the transcript', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const result = await runTurn({ model, tools: [add], input: 'What is 1 + 2?' });
    expect(result.status).toBe('stopped');
    expect(result.text).toBe('3');
    expect(transcriptLines(result.transcript)).toEqual([
      'user: What is 1 + 2?',
      'assistant: [call_1 add]',
      'tool call_1 add: ok 3',
      'assistant: 3',
    ]);
    expect(result.usage.modelCalls).toBe(2);
    expect(result.usage.toolCalls).toBe(1);
  });

  it('retries a retryable model error up to maxModelRetries times', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), fail(retryable('overloaded')), text('ok')]);
    const result = await runTurn({ model, input: 'hi', modelRetryBackoffMs: 0 });
    expect(result.status).toBe('stopped');
    expect(result.output).toBe('ok');
    expect(model.calls).toHaveLength(3);
    // Core decides each retry: every one is a call_model of its own and counts as a model call.
    expect(result.usage.modelCalls).toBe(3);
    expect(result.state.limits.modelRetryBackoffMs).toBe(0);
  });

  it('announces each retry with a model_retry notice and records it in the trace', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), fail(retryable('overloaded')), text('ok')]);
    const notices: Notice[] = [];
    const result = await runTurn({
      model,
      input: 'hi',
      limits: { modelRetryBackoffMs: 1 },
      trace: true,
      onNotice: (n) => notices.push(n),
    });
    expect(notices.filter((n) => n.name === 'model_retry').map((n) => n.data)).toEqual([
      { attempt: 1, delayMs: 1, error: { kind: 'model_error', message: 'overloaded', retryable: true } },
      { attempt: 2, delayMs: 2, error: { kind: 'model_error', message: 'overloaded', retryable: true } },
    ]);
    const requests = result.trace?.entries
      .flatMap((e) => e.effects)
      .filter((e) => e.type === 'call_model')
      .map((e) => e.request);
    expect(requests).toEqual([
      { iteration: 1, final: false },
      { iteration: 1, final: false, attempt: 1, delayMs: 1 },
      { iteration: 1, final: false, attempt: 2, delayMs: 2 },
    ]);
  });

  it('a cancel during the wait before a retry ends the turn at once, without calling the model again', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), text('never')]);
    const controller = new AbortController();
    // A minute's wait: the turn only ends promptly because the wait is cancellable.
    const result = await runTurn({
      model,
      input: 'hi',
      limits: { modelRetryBackoffMs: 60_000 },
      signal: controller.signal,
      onNotice: (n) => (n.name === 'model_retry' ? controller.abort('user pressed stop') : undefined),
    });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('user pressed stop');
    expect(model.calls).toHaveLength(1);
  });

  it('maps the retry options into limits, and refuses one set both ways', async () => {
    const result = await runTurn({
      model: scriptedModel([text('ok')]),
      input: 'hi',
      maxModelRetries: 5,
      modelRetryBackoffMs: 10,
    });
    expect(result.state.limits).toMatchObject({ maxModelRetries: 5, modelRetryBackoffMs: 10 });
    await expect(
      runTurn({ model: scriptedModel([]), input: 'x', maxModelRetries: 1, limits: { maxModelRetries: 2 } }),
    ).rejects.toThrow(
      'runTurn: `maxModelRetries` is set both as an option and in `limits`; set it once, in `limits.maxModelRetries`.',
    );
  });

  it('passes wrapExecution to the dispatcher it makes, and refuses it beside a ready dispatcher', async () => {
    const seen: string[] = [];
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'add',
      id: 'turn-w',
      wrapExecution: async (execution, run) => {
        const outcome = await run();
        seen.push(`${execution.turnId} ${execution.tool} ${JSON.stringify(execution.input)} -> ${String(outcome.output)}`);
      },
    });
    expect(result.text).toBe('3');
    expect(seen).toEqual(['turn-w add {"a":1,"b":2} -> 3']);
    await expect(
      runTurn({
        model: scriptedModel([]),
        tools: createDispatcher({ tools: [add] }),
        input: 'x',
        wrapExecution: async (_e, run) => run(),
      }),
    ).rejects.toThrow(
      'runTurn: pass wrapExecution to createDispatcher when `tools` is already a dispatcher (it was made without them).',
    );
  });

  it('hands hooks the turn id, its context and the transcript; keeps audit records in the trace; says when a hook blocked', async () => {
    const notices: Notice[] = [];
    const seen: string[] = [];
    const result = await runTurn({
      model: scriptedModel([
        toolCalls(call('add', { a: 1, b: 2 }), call('deploy', { service: 'api' })),
        text('Added; deploy blocked.'),
      ]),
      tools: [add, deploy],
      input: 'add, then deploy',
      id: 'turn-h',
      context: { userId: 'u-1', cwd: '/srv/app' },
      trace: true,
      hooks: {
        before: [
          {
            name: 'freeze',
            run: ({ call: c, turnId, context, transcript }) => {
              seen.push(`${turnId} ${String(context['userId'])} ${transcript.length} ${c.name}`);
              return c.name === 'deploy' ? { kind: 'halt', output: 'Deploys are frozen today.' } : undefined;
            },
          },
        ],
      },
      onNotice: (n) => notices.push(n),
    });
    expect(result.text).toBe('Added; deploy blocked.');
    // The transcript so far: the user's message and the assistant's tool calls.
    expect(seen).toEqual(['turn-h u-1 2 add', 'turn-h u-1 2 deploy']);
    expect(notices.filter((n) => n.name === 'hook_blocked')).toEqual([
      { name: 'hook_blocked', data: { callId: 'call_2', tool: 'deploy', hook: 'freeze', reason: 'Deploys are frozen today.' } },
    ]);
    const completed = result.trace?.entries.find((e) => e.event.type === 'tools_completed')?.event;
    // In the order the results were known: the denial at once, the tool when it had run.
    expect(completed).toMatchObject({
      records: [
        {
          turnId: 'turn-h',
          callId: 'call_2',
          tool: 'deploy',
          decision: 'deny',
          source: 'hook:freeze',
          outcome: 'denied',
          attempts: 0,
        },
        {
          turnId: 'turn-h',
          callId: 'call_1',
          tool: 'add',
          decision: 'allow',
          outcome: 'ok',
          attempts: 1,
          context: { userId: 'u-1', cwd: '/srv/app' },
        },
      ],
    });
    await expect(runTurn({ model: scriptedModel([]), input: 'x', context: ['u-1'] as never })).rejects.toThrow(
      'runTurn option `context` must be a JSON object, like { sessionId, userId, cwd }.',
    );
  });

  it('limits.budget.maxToolCalls holds per call: with 1 and a batch of three, one runs and the others get a budget result', async () => {
    let runs = 0;
    const counted = defineTool({
      name: 'count',
      description: 'Counts.',
      input: z.object({ n: z.number() }),
      execute: ({ n }) => {
        runs++;
        return n;
      },
    });
    const model = scriptedModel([
      toolCalls(call('count', { n: 1 }), call('count', { n: 2 }), call('count', { n: 3 })),
      text('Only one ran.'),
    ]);
    const result = await runTurn({ model, tools: [counted], input: 'count thrice', limits: { budget: { maxToolCalls: 1 } } });
    expect(runs).toBe(1);
    const budget = "not executed: the turn's tool call budget is used up (limits.budget.maxToolCalls is 1).";
    expect(result.transcript.filter((m) => m.role === 'tool').map((m) => m.result)).toEqual([
      { callId: 'call_1', name: 'count', output: 1, isError: false },
      { callId: 'call_2', name: 'count', output: budget, isError: true, errorKind: 'budget' },
      { callId: 'call_3', name: 'count', output: budget, isError: true, errorKind: 'budget' },
    ]);
    // The budget is used up, so the turn stops before another model call.
    expect(result.outcome).toMatchObject({ status: 'stopped', stopReason: 'budget_exhausted' });
    expect(model.calls).toHaveLength(1);
  });

  it('resumeTurn applies its retry options to the resumed turn', async () => {
    const suspended = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' }))]),
      tools: [deploy],
      input: 'deploy',
    });
    expect(suspended.status).toBe('suspended');
    const model = scriptedModel(
      [toolCalls(call('deploy', { service: 'api' })), fail(retryable('overloaded')), text('deployed')],
      { startAt: 1 },
    );
    const saved = JSON.parse(JSON.stringify(suspended));
    const resumed = await resumeTurn({
      ...saved,
      model,
      tools: [deploy],
      decisions: { call_1: { type: 'approve' } },
      maxModelRetries: 1,
      modelRetryBackoffMs: 0,
    });
    expect(resumed.state.limits).toMatchObject({ maxModelRetries: 1, modelRetryBackoffMs: 0 });
    expect(resumed.status).toBe('stopped');
    expect(resumed.output).toBe('deployed');
    expect(model.calls).toHaveLength(2);
  });

  it('a dispatcher that throws fails the turn with dispatch_failed, and every call in flight gets a result from core', async () => {
    const broken = createDispatcher({ tools: [add] });
    const dispatcher = {
      ...broken,
      toolSpecs: () => broken.toolSpecs(),
      dispatch: () => Promise.reject(new Error('db down')),
    } as typeof broken;
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 }), call('add', { a: 2, b: 2 })), text('never')]);
    const result = await runTurn({ model, tools: dispatcher, input: 'add', trace: true });
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ kind: 'dispatch_failed', message: 'The tool dispatcher failed: db down.' });
    const why =
      'not executed: the tool dispatcher failed before this call reported a result (The tool dispatcher failed: db down.).';
    expect(transcriptLines(result.transcript)).toEqual([
      'user: add',
      'assistant: [call_1 add, call_2 add]',
      `tool call_1 add: error ${why}`,
      `tool call_2 add: error ${why}`,
    ]);
    expect(result.trace?.entries.map((e) => e.event.type)).toContain('effect_failed');
  });

  it('gives up after maxModelRetries and keeps retryable on the error', async () => {
    const model = scriptedModel([fail(retryable('overloaded')), fail(retryable('overloaded')), text('never')]);
    const result = await runTurn({ model, input: 'hi', modelRetryBackoffMs: 0, maxModelRetries: 1 });
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ kind: 'model_error', message: 'overloaded', retryable: true });
    expect(model.calls).toHaveLength(2);
  });

  it('does not retry an error that is not retryable', async () => {
    const model = scriptedModel([fail(Object.assign(new Error('bad request'), { retryable: false })), text('never')]);
    const result = await runTurn({ model, input: 'hi', modelRetryBackoffMs: 0 });
    expect(result.error).toEqual({ kind: 'model_error', message: 'bad request', retryable: false });
    expect(model.calls).toHaveLength(1);
  });

  it('turns a thrown non-Error into a readable model_error', async () => {
    const model = scriptedModel([fail({ code: 42 })]);
    const result = await runTurn({ model, input: 'hi' });
    expect(result.error?.kind).toBe('model_error');
    expect(result.error?.message).toBe('{"code":42}');
  });

  it('accepts JSON in a ```json fence and names the failing path of a schema', async () => {
    const schema = z.object({ items: z.array(z.object({ name: z.string() })) });
    const model = scriptedModel([text('{"items": [{"name": 1}]}'), text('```json\n{"items": [{"name": "a"}]}\n```')]);
    const result = await runTurn({ model, input: 'list', output: schema });
    expect(result.status).toBe('stopped');
    expect(result.output).toEqual({ items: [{ name: 'a' }] });
    const repair = result.transcript[2];
    expect(repair?.role).toBe('user');
    expect(repair?.role === 'user' ? repair.content : '').toContain('at items[0].name:');
  });

  it('sends a check rejection back to the model and uses its accepted output', async () => {
    const model = scriptedModel([text('maybe'), text('yes')]);
    const result = await runTurn({
      model,
      input: 'yes or no?',
      check: (candidate) =>
        candidate === 'yes' || candidate === 'no'
          ? { ok: true, output: candidate === 'yes' }
          : { ok: false, reason: 'Answer yes or no.' },
    });
    expect(result.output).toBe(true);
    expect(transcriptLines(result.transcript)).toEqual([
      'user: yes or no?',
      'assistant: maybe',
      'user: Answer yes or no.',
      'assistant: yes',
    ]);
  });

  it('fails the turn naming check when the check throws or answers garbage', async () => {
    const thrown = await runTurn({
      model: scriptedModel([text('x')]),
      input: 'hi',
      check: () => {
        throw new Error('db down');
      },
    });
    expect(thrown.status).toBe('failed');
    expect(thrown.error?.kind).toBe('check_failed');
    expect(thrown.error?.message).toContain('check function threw: db down');
    expect(thrown.state.status).toBe('failed');
    const garbage = await runTurn({ model: scriptedModel([text('x')]), input: 'hi', check: () => 'fine' as never });
    expect(garbage.error?.kind).toBe('check_failed');
    expect(garbage.error?.message).toContain('"fine"');
  });

  it('fails the turn naming compact when compact throws or returns garbage', async () => {
    const steps = () => scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const thrown = await runTurn({
      model: steps(),
      tools: [add],
      input: 'hi',
      compact: () => {
        throw new Error('no space');
      },
    });
    expect(thrown.error).toMatchObject({ kind: 'compact_failed' });
    expect(thrown.error?.message).toContain('compact function threw: no space');
    // The tool result made it into the transcript before compaction failed.
    expect(transcriptLines(thrown.transcript).at(-1)).toBe('tool call_1 add: ok 3');
    const garbage = await runTurn({ model: steps(), tools: [add], input: 'hi', compact: () => 'short' as never });
    expect(garbage.error?.kind).toBe('compact_failed');
  });

  it('fails the turn with effect_failed compact when compact separates tool results from their call', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 }), call('add', { a: 3, b: 4 })), text('3 and 7')]);
    const onStep: string[] = [];
    const result = await runTurn({
      model,
      tools: [add],
      input: 'hi',
      compact: (t) => t.filter((m) => m.role !== 'assistant'),
      onStep: (r) => onStep.push(r.event.type === 'effect_failed' ? `effect_failed ${r.event.effect}` : r.event.type),
    });
    expect(onStep).toContain('effect_failed compact');
    expect(result.error).toEqual({
      kind: 'compact_failed',
      message:
        'The compact function broke calls apart from their results: it keeps the tool results for "call_1", "call_2" but drops the assistant message that made those calls. ' +
        'Keep or drop an assistant message together with its tool results (keepLastMessages does); the transcript was left as it was.',
    });
    // The model never saw the broken transcript, and the transcript was left whole.
    expect(model.calls).toHaveLength(1);
    expect(result.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
  });

  it('fails the turn when compact keeps a call but drops its result, or returns a message without its parts', async () => {
    const steps = () => scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const dropped = await runTurn({
      model: steps(),
      tools: [add],
      input: 'hi',
      compact: (t) => t.filter((m) => m.role !== 'tool'),
    });
    expect(dropped.error?.message).toContain('it keeps the calls "call_1" but drops their tool results');
    const partless = await runTurn({
      model: steps(),
      tools: [add],
      input: 'hi',
      compact: (t) => [...t, { role: 'tool' } as never],
    });
    expect(partless.error?.message).toContain('item 3 is not one');
  });

  it('a transcript handed over already unpaired is not blamed on compact', async () => {
    const earlier = [{ role: 'tool' as const, result: { callId: 'old', name: 'add', output: 1, isError: false } }];
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'hi',
      transcript: earlier,
      compact: (t) => t.slice(),
    });
    expect(result.status).toBe('stopped');
  });

  describe('selectTools and alwaysOffer: which tools each model call sees', () => {
    const two = [add, search];

    it('asks before each call that may use tools and offers only what it names, plus alwaysOffer', async () => {
      const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), toolCalls(call('search', { q: 'x' })), text('done')]);
      const asked: Array<{ iteration: number; last: string | undefined; tools: string[] }> = [];
      const result = await runTurn({
        model,
        tools: two,
        input: 'hi',
        alwaysOffer: ['search'],
        selectTools: (info) => {
          asked.push({ iteration: info.iteration, last: info.transcript.at(-1)?.role, tools: info.tools.map((t) => t.name) });
          return info.iteration === 1 ? ['add'] : [];
        },
      });
      expect(result.status).toBe('stopped');
      expect(asked).toEqual([
        { iteration: 1, last: 'user', tools: ['add', 'search'] },
        { iteration: 2, last: 'tool', tools: ['add', 'search'] },
        { iteration: 3, last: 'tool', tools: ['add', 'search'] },
      ]);
      expect(model.calls.map((c) => c.tools.map((t) => t.name))).toEqual([['add', 'search'], ['search'], ['search']]);
    });

    it('a forced final call offers no tools and does not ask', async () => {
      const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
      const iterations: number[] = [];
      const result = await runTurn({
        model,
        tools: two,
        input: 'hi',
        limits: { maxIterations: 1 },
        alwaysOffer: ['add'],
        selectTools: (info) => (iterations.push(info.iteration), ['add']),
      });
      expect(result.stopReason).toBe('max_iterations');
      expect(iterations).toEqual([1]);
      expect(model.calls[1]).toMatchObject({ tools: [], toolChoice: 'none' });
    });

    it('a selectTools that throws or names an unknown tool fails the turn before the model call (tool_selection_failed, no retry)', async () => {
      const model = scriptedModel([text('never')]);
      const unknown = await runTurn({ model, tools: two, input: 'hi', selectTools: () => ['add', 'deploy'] });
      expect(unknown.error).toEqual({
        kind: 'tool_selection_failed',
        message:
          "The selectTools function chose 'deploy', which is not a defined tool (the tools: 'add', 'search'). No model call was made.",
        retryable: false,
      });
      const thrown = await runTurn({
        model,
        tools: two,
        input: 'hi',
        selectTools: () => {
          throw new Error('index offline');
        },
      });
      expect(thrown.error?.message).toBe(
        'The selectTools function threw: index offline. Fix the function passed as `selectTools`; no model call was made.',
      );
      const garbage = await runTurn({ model, tools: two, input: 'hi', selectTools: () => 'add' as never });
      expect(garbage.error?.message).toContain("must return an array of tool names; it returned the string 'add'");
      expect(model.calls).toHaveLength(0);
    });

    it('checks the options up front', async () => {
      const model = scriptedModel([text('x')]);
      await expect(runTurn({ model, tools: two, input: 'hi', alwaysOffer: ['deploy'] })).rejects.toThrow(
        "runTurn option `alwaysOffer` names 'deploy', not defined tools (the tools: 'add', 'search').",
      );
      await expect(runTurn({ model, tools: two, input: 'hi', alwaysOffer: 'add' as never })).rejects.toThrow(
        'must be an array of tool names',
      );
      await expect(runTurn({ model, tools: two, input: 'hi', selectTools: ['add'] as never })).rejects.toThrow(
        '`selectTools` must be a function',
      );
    });
  });

  it('replaces the transcript with what compact returns', async () => {
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const result = await runTurn({
      model,
      tools: [add],
      input: 'hi',
      system: 'Be brief.',
      compact: (t) => t.filter((m) => m.role !== 'user'),
    });
    expect(model.calls[1]?.messages.map((m) => m.role)).toEqual(['system', 'assistant', 'tool']);
    expect(result.transcript.map((m) => m.role)).toEqual(['system', 'assistant', 'tool', 'assistant']);
  });

  it('reports notices and every effect, and ignores observers that throw', async () => {
    const notices: Notice['name'][] = [];
    const effects: Effect['type'][] = [];
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'hi',
      onNotice: (n) => {
        notices.push(n.name);
        throw new Error('observer bug');
      },
      onEffect: (e) => {
        effects.push(e.type);
      },
      onStep: () => {
        throw new Error('another observer bug');
      },
    });
    expect(result.status).toBe('stopped');
    expect(notices).toEqual(['turn_started', 'iteration', 'steering', 'iteration']);
    expect(effects[0]).toBe('append');
    expect(effects.at(-1)).toBe('done');
    expect(effects).toContain('dispatch_tools');
  });

  it('records a trace that replays without a difference, and reports a tampered one', async () => {
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
      input: 'hi',
      trace: true,
      id: 't1',
    });
    // inline's TurnTrace is the Trace that @turnkit/testing replays (checked by the compiler here).
    const typed: Trace | undefined = result.trace;
    expect(typed?.initial.status).toBe('ready');
    const trace = JSON.parse(JSON.stringify(result.trace));
    expect(trace.entries.map((e: { event: { type: string } }) => e.event.type)).toEqual([
      'start',
      'model_responded',
      'tools_completed',
      'compacted',
      'model_responded',
      'output_accepted',
    ]);
    expect(replay(trace)).toEqual({ ok: true, steps: 6 });
    trace.entries[1].event.response.toolCalls[0].input.b = 5;
    const report = replay(trace);
    expect(report.ok).toBe(false);
    if (!report.ok)
      expect(report.difference).toMatchObject({
        index: 1,
        part: 'state',
        path: 'batch.calls[0].input.b',
        recorded: 2,
        replayed: 5,
      });
  });

  it('has no trace unless asked', async () => {
    const result = await runTurn({ model: scriptedModel([text('x')]), input: 'hi' });
    expect(result.trace).toBeUndefined();
  });

  it('is cancelled without a model call when the signal is already aborted', async () => {
    const model = scriptedModel([text('x')]);
    const controller = new AbortController();
    controller.abort('too late');
    const result = await runTurn({ model, input: 'hi', signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('too late');
    expect(model.calls).toHaveLength(0);
  });

  it('cancels at once even when a tool ignores its signal', async () => {
    const controller = new AbortController();
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Never finishes.',
      input: z.object({}),
      execute: () => {
        controller.abort('stop now');
        return new Promise(() => undefined);
      },
    });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('stubborn'))]),
      tools: [stubborn],
      input: 'hi',
      signal: controller.signal,
    });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('stop now');
    expect(transcriptLines(result.transcript).at(-1)).toMatch(/^tool call_1 stubborn: error cancelled/);
  });

  it('cancels a model call that ignores its signal', async () => {
    const controller = new AbortController();
    const model = scriptedModel([
      () => {
        controller.abort();
        return new Promise(() => undefined);
      },
    ]);
    const result = await runTurn({ model, input: 'hi', signal: controller.signal });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('cancelled by the caller');
  });

  it('rejects every parked call when approve throws (fail closed)', async () => {
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('ok')]),
      tools: [deploy],
      input: 'hi',
      approve: () => {
        throw new Error('pager offline');
      },
    });
    expect(transcriptLines(result.transcript)[2]).toMatch(
      /^tool call_1 deploy: error rejected: the approve callback failed \(pager offline\)/,
    );
  });

  it('records user decisions with the dispatcher and remembers grants', async () => {
    const records: DecisionRecord[] = [];
    const dispatcher = createDispatcher({ tools: [deploy], onDecision: (r) => records.push(r) });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('ok')]),
      tools: dispatcher,
      input: 'hi',
      approve: () => ({ call_1: { type: 'approve', remember: 'session' } }),
    });
    expect(result.status).toBe('stopped');
    expect(records.map((r) => r.decision)).toEqual(['ask', 'user_approved']);
    expect(dispatcher.grants()).toEqual([{ scope: 'session' }]);
  });

  it('a person who quits at the approval prompt cancels the turn, and no decision is recorded', async () => {
    const records: DecisionRecord[] = [];
    const controller = new AbortController();
    const dispatcher = createDispatcher({ tools: [deploy], onDecision: (r) => records.push(r) });
    const result = await runTurn({
      model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('never asked')]),
      tools: dispatcher,
      input: 'hi',
      signal: controller.signal,
      approve: () => {
        controller.abort('quit at the prompt');
        throw new Error('User force closed the prompt');
      },
    });
    expect(result.status).toBe('cancelled');
    expect(result.reason).toBe('quit at the prompt');
    expect(records.map((r) => r.decision)).toEqual(['ask']);
    expect(transcriptLines(result.transcript).at(-1)).toMatch(/^tool call_1 deploy: error cancelled/);
  });

  it('carries grants through suspension and restores them on resume', async () => {
    const dispatcher = createDispatcher({ tools: [add, deploy], grants: [{ scope: 'tool', tool: 'add' }] });
    const model = scriptedModel([
      toolCalls(call('deploy', { service: 'api' })),
      toolCalls(call('deploy', { service: 'db' })),
      text('done'),
    ]);
    const first = await runTurn({ model, tools: dispatcher, input: 'deploy both' });
    expect(first.status).toBe('suspended');
    expect(first.grants).toEqual([{ scope: 'tool', tool: 'add' }]);
    expect(first.budgetUsage).toEqual({ total: 0, perTool: {} });
    const saved = JSON.parse(JSON.stringify(first));
    // A remembered grant made while resuming lets the second deploy run without asking.
    const second = await resumeTurn({
      ...saved,
      model,
      tools: [add, deploy],
      decisions: { call_1: { type: 'approve', remember: 'tool' } },
    });
    expect(second.status).toBe('stopped');
    expect(transcriptLines(second.transcript).slice(2)).toEqual([
      'tool call_1 deploy: ok "deployed api"',
      'assistant: [call_2 deploy]',
      'tool call_2 deploy: ok "deployed db"',
      'assistant: done',
    ]);
    expect(second.grants).toBeUndefined();
  });

  it('suspends again when resumed without decisions and no approve', async () => {
    const model = scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('done')]);
    const first = await runTurn({ model, tools: [deploy], input: 'x' });
    const again = await resumeTurn({ state: first.state, transcript: first.transcript, model, tools: [deploy] });
    expect(again.status).toBe('suspended');
    expect(again.pending).toEqual(first.pending);
    const asked = await resumeTurn({
      state: first.state,
      transcript: first.transcript,
      model,
      tools: [deploy],
      approve: () => ({ call_1: { type: 'approve' } }),
    });
    expect(asked.status).toBe('stopped');
  });

  it('resumes a state persisted while tools ran: they get interrupted results and are not re-run', async () => {
    const states: { status: string; state: unknown }[] = [];
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Crashes the process (here: never ends).',
      input: z.object({}),
      execute: () => new Promise(() => undefined),
    });
    const controller = new AbortController();
    const first = await runTurn({
      model: scriptedModel([toolCalls(call('stubborn'))]),
      tools: [stubborn],
      input: 'go',
      signal: controller.signal,
      onStep: ({ state }) => {
        states.push({ status: state.status, state: JSON.parse(JSON.stringify(state)) });
        if (state.status === 'dispatching') queueMicrotask(() => controller.abort('process died'));
      },
    });
    expect(first.status).toBe('cancelled');
    const saved = states.find((s) => s.status === 'dispatching')!.state;
    const model = scriptedModel([text('The tool was interrupted.')]);
    const transcript = first.transcript.slice(0, 2);
    const resumed = await resumeTurn({ state: saved, transcript, model, tools: [stubborn] });
    expect(resumed.status).toBe('stopped');
    expect(transcriptLines(resumed.transcript)).toEqual([
      'user: go',
      'assistant: [call_1 stubborn]',
      expect.stringMatching(/^tool call_1 stubborn: error interrupted/),
      'assistant: The tool was interrupted.',
    ]);
  });

  it('lists only the undecided calls as pending after a partial decision', async () => {
    const model = scriptedModel([toolCalls(call('deploy', { service: 'a' }), call('deploy', { service: 'b' })), text('done')]);
    const first = await runTurn({ model, tools: [deploy], input: 'x' });
    expect(first.pending?.map((p) => p.call.id)).toEqual(['call_1', 'call_2']);
    const partial = await resumeTurn({
      state: first.state,
      transcript: first.transcript,
      model,
      tools: [deploy],
      decisions: { call_2: { type: 'reject' } },
    });
    expect(partial.status).toBe('suspended');
    expect(partial.pending?.map((p) => p.call.id)).toEqual(['call_1']);
    const done = await resumeTurn({
      ...JSON.parse(JSON.stringify(partial)),
      model,
      tools: [deploy],
      decisions: { call_1: { type: 'approve' } },
    });
    expect(transcriptLines(done.transcript).slice(2, 4)).toEqual([
      'tool call_1 deploy: ok "deployed a"',
      expect.stringMatching(/^tool call_2 deploy: error rejected\./),
    ]);
  });

  it('refuses to resume a turn that never started', async () => {
    const t = await runTurn({ model: scriptedModel([text('x')]), input: 'x', trace: true });
    await expect(resumeTurn({ state: t.trace!.initial, transcript: [], model: scriptedModel([]) })).rejects.toThrow(
      /never started; start it with runTurn/,
    );
  });

  it('throws a TurnStateError for a garbage state on resume', async () => {
    await expect(resumeTurn({ state: { version: 1 }, transcript: [], model: scriptedModel([]) })).rejects.toThrow(
      /Invalid turn state/,
    );
  });

  it('merges the dispatcher loop-exempt tools into the limits', async () => {
    const result = await runTurn({
      model: scriptedModel([text('x')]),
      tools: [search],
      input: 'hi',
      limits: { loopExemptTools: ['other'] },
    });
    expect(result.state.limits.loopExemptTools).toEqual(['other', 'search']);
  });

  it('does not repeat a system message the transcript already starts with', async () => {
    const model = scriptedModel([text('2')]);
    const result = await runTurn({
      model,
      input: 'and now?',
      system: 'Be brief.',
      transcript: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: '1?' },
        { role: 'assistant', content: '1', toolCalls: [] },
      ],
    });
    expect(transcriptLines(result.transcript)).toEqual([
      'system: Be brief.',
      'user: 1?',
      'assistant: 1',
      'user: and now?',
      'assistant: 2',
    ]);
  });

  it('rejects bad options with a TypeError naming the option', async () => {
    await expect(runTurn({ model: {} as never, input: 'x' })).rejects.toThrow(/option `model`/);
    await expect(
      runTurn({
        model: scriptedModel([]),
        tools: createDispatcher({ tools: [add] }),
        permissions: { deny: ['add'] },
        input: 'x',
      }),
    ).rejects.toThrow(/createDispatcher/);
    await expect(runTurn({ model: scriptedModel([]), output: {} as never, input: 'x' })).rejects.toThrow(/option `output`/);
    await expect(runTurn({ model: scriptedModel([]), input: 'x', limits: { maxIterations: 0 } })).rejects.toThrow(RangeError);
    await expect(runTurn({ model: scriptedModel([]), input: 'x', maxModelRetries: -1 })).rejects.toThrow(
      /option `maxModelRetries` must be a whole number >= 0, got -1/,
    );
    await expect(runTurn({ model: scriptedModel([]), input: 'x', modelRetryBackoffMs: Number.NaN })).rejects.toThrow(
      /modelRetryBackoffMs/,
    );
  });
});

// The conformance corpus: scripted turns with hand-written expectations. Every interpreter must
// produce exactly these transcripts and outcomes. The expectations were written from the
// transition table of docs/turn-contract.md, not copied from any interpreter's output.

import { isDeepStrictEqual } from 'node:util';
import type { ApprovalDecision, JsonValue, ParkedCall, StopReason, ToolSpec } from '@turnkit/core';
import { createDispatcher, defineTool, type Dispatcher, type DispatcherOptions } from '@turnkit/dispatch';
import { z } from 'zod';
import { call, fail, scriptedModel, text, toolCalls, type ScriptedModel, type ScriptStep } from './scripted.js';
import type { ConformanceResult, ConformanceRunOptions } from './types.js';

/** What a scenario expects. `transcript` lines follow `messageLine`; a RegExp matches one line. */
export interface ExpectedOutcome {
  readonly status: ConformanceResult['status'];
  readonly stopReason?: StopReason;
  readonly errorKind?: string;
  readonly errorMessage?: RegExp;
  /** Compared with deep equality when present. */
  readonly output?: JsonValue;
  readonly text?: string;
  readonly transcript: readonly (string | RegExp)[];
}

/** What tools and callbacks saw during a run, for checks beyond the transcript. */
export interface Probe {
  readonly approvals: (readonly ParkedCall[])[];
  toolSignalAborted: boolean;
  readonly executed: string[];
}

export interface ScenarioRun {
  readonly options: ConformanceRunOptions;
  readonly model: ScriptedModel;
  readonly probe: Probe;
  /** A new dispatcher with the same tools (a resume in a "new process"). */
  freshTools(): Dispatcher;
}

export interface Scenario {
  readonly name: string;
  /** What the scenario checks, in one sentence. */
  readonly about: string;
  setup(): ScenarioRun;
  readonly expected: ExpectedOutcome;
  /** Extra checks; throws an Error saying what is wrong. */
  verify?(result: ConformanceResult, run: ScenarioRun): void;
  /** For a suspended turn: the decisions to resume with and what the resumed turn must give. */
  readonly resume?: {
    readonly decisions: Record<string, ApprovalDecision>;
    readonly expected: ExpectedOutcome;
    verify?(result: ConformanceResult, run: ScenarioRun): void;
  };
}

/** Throws an Error with `message` unless `ok`: a scenario's extra checks. */
export function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

const USER = 'user: What is 1 + 2?';

// ---------------------------------------------------------------------------------------------
// Tools

function tools(probe: Probe, abort?: AbortController) {
  const ran = <T>(name: string, value: T): T => {
    probe.executed.push(name);
    return value;
  };
  return [
    defineTool({
      name: 'add',
      description: 'Adds two numbers.',
      input: z.object({ a: z.number(), b: z.number() }),
      readOnly: true,
      execute: ({ a, b }) => ran('add', a + b),
    }),
    defineTool({
      name: 'mul',
      description: 'Multiplies two numbers.',
      input: z.object({ a: z.number(), b: z.number() }),
      readOnly: true,
      execute: ({ a, b }) => ran('mul', a * b),
    }),
    defineTool({
      name: 'boom',
      description: 'Always fails.',
      input: z.object({}),
      execute: () => {
        probe.executed.push('boom');
        throw new Error('disk full');
      },
    }),
    defineTool({
      name: 'deploy',
      description: 'Deploys a service.',
      input: z.object({ service: z.string() }),
      needsApproval: true,
      execute: ({ service }) => ran('deploy', `deployed ${service}`),
    }),
    defineTool({
      name: 'search',
      description: 'Searches notes.',
      input: z.object({ q: z.string() }),
      readOnly: true,
      loopExempt: true,
      execute: ({ q }) => ran('search', `no notes about ${q}`),
    }),
    defineTool({
      name: 'escalate',
      description: 'Hands the next answer to a bigger model.',
      input: z.object({}),
      model: 'big-model',
      execute: () => ran('escalate', 'escalated'),
    }),
    defineTool({
      name: 'finish',
      description: 'Hands the task to a person.',
      input: z.object({}),
      execute: () => ran('finish', 'handed off'),
    }),
    defineTool({
      name: 'slow',
      description: 'Runs until cancelled.',
      input: z.object({}),
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          probe.executed.push('slow');
          ctx.signal.addEventListener('abort', () => {
            probe.toolSignalAborted = true;
            reject(new Error('stopped'));
          });
          // The "user" presses stop while the tool runs.
          abort?.abort('the user pressed stop');
        }),
    }),
  ];
}

interface SetupOptions extends Partial<Omit<ConformanceRunOptions, 'model' | 'tools' | 'id'>> {
  readonly dispatcher?: Omit<DispatcherOptions, 'tools'>;
  /** Give the run an abort signal (the controller is passed to tools and to a steps function). */
  readonly abortable?: boolean;
}

type Steps = readonly ScriptStep[] | ((abort: AbortController) => readonly ScriptStep[]);

/** A fresh run per call: new model, dispatcher, probe and abort controller. */
function setup(steps: Steps, extra: SetupOptions = {}): () => ScenarioRun {
  return () => {
    const probe: Probe = { approvals: [], toolSignalAborted: false, executed: [] };
    const { dispatcher: dispatcherOptions, abortable, ...rest } = extra;
    const controller = new AbortController();
    const abort = abortable === true ? controller : undefined;
    // The tools that change something but need no person in these scenarios are allowed by rule
    // (the dispatcher asks by default); `deploy` asks (needsApproval).
    const made: DispatcherOptions = {
      permissions: { allow: ['boom', 'escalate', 'finish', 'slow'] },
      ...dispatcherOptions,
      tools: tools(probe, abort),
    };
    const makeTools = (): Dispatcher => createDispatcher(made);
    const model = scriptedModel(typeof steps === 'function' ? steps(controller) : steps);
    const options: ConformanceRunOptions = {
      id: 'conformance-turn',
      model,
      tools: makeTools(),
      dispatcherOptions: made,
      input: 'What is 1 + 2?',
      ...rest,
      ...(abort === undefined ? {} : { signal: abort.signal }),
    };
    return { options, model, probe, freshTools: makeTools };
  };
}

/** An approve callback that records what it was asked and answers with `decide`. */
function approver(decide: (pending: readonly ParkedCall[]) => Record<string, ApprovalDecision>) {
  return (probe: Probe) => async (pending: readonly ParkedCall[]) => {
    probe.approvals.push(pending);
    return decide(pending);
  };
}

/** Setup whose approve callback needs the run's probe. */
function withApprover(steps: Steps, approve: ReturnType<typeof approver>, extra: SetupOptions = {}): () => ScenarioRun {
  return () => {
    const run = setup(steps, extra)();
    return { ...run, options: { ...run.options, approve: approve(run.probe) } };
  };
}

const toolNames = (specs: readonly ToolSpec[]): string[] => specs.map((s) => s.name);

// ---------------------------------------------------------------------------------------------
// The corpus

/**
 * The conformance corpus: scripted turns (tools in parallel, approvals, denials, limits, retries, cancels, output
 * repair, …), each with its hand-written transcript and outcome. Every interpreter gives the same ones
 * (`interpreterConformance`).
 */
export const scenarios: readonly Scenario[] = [
  {
    name: 'plain answer',
    about: 'A reply without tool calls is the final answer; the output is its text.',
    setup: setup([text('3')]),
    expected: { status: 'stopped', stopReason: 'completed', output: '3', text: '3', transcript: [USER, 'assistant: 3'] },
    verify(_result, run) {
      const request = run.model.calls[0];
      check(
        request?.toolChoice === 'auto' && request.iteration === 1,
        'the first request must have toolChoice auto and iteration 1',
      );
      check(toolNames(request?.tools ?? []).includes('add'), 'the first request must list the dispatcher tools');
      run.model.assertDone();
    },
  },
  {
    name: 'system prompt and earlier transcript',
    about: 'The system message and earlier messages come first in the transcript and in the request.',
    setup: setup([text('4')], {
      system: 'You are terse.',
      transcript: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!', toolCalls: [] },
      ],
      input: 'What is 2 + 2?',
    }),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: '4',
      transcript: ['system: You are terse.', 'user: Hi', 'assistant: Hello!', 'user: What is 2 + 2?', 'assistant: 4'],
    },
    verify(_result, run) {
      const roles = run.model.calls[0]?.messages.map((m) => m.role).join(',');
      check(roles === 'system,user,assistant,user', `the request must carry system,user,assistant,user; got ${roles}`);
    },
  },
  {
    name: 'one tool round',
    about: 'A tool call is dispatched, its result appended, and the model answers with it.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 })), text('1 + 2 = 3')]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: '1 + 2 = 3',
      text: '1 + 2 = 3',
      transcript: [USER, 'assistant: [call_1 add]', 'tool call_1 add: ok 3', 'assistant: 1 + 2 = 3'],
    },
    verify(_result, run) {
      const second = run.model.calls[1];
      check(second?.iteration === 2, 'the request after one tool round must have iteration 2');
      check(second?.messages.at(-1)?.role === 'tool', 'the second request must end with the tool result');
    },
  },
  {
    name: 'two tool rounds',
    about: 'Rounds follow each other; each result is fed back before the next call.',
    setup: setup([
      toolCalls(call('add', { a: 1, b: 2 })),
      toolCalls(call('mul', { a: 3, b: 4 }), { text: 'Now multiply.' }),
      text('12'),
    ]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: '12',
      transcript: [
        USER,
        'assistant: [call_1 add]',
        'tool call_1 add: ok 3',
        'assistant: Now multiply. [call_2 mul]',
        'tool call_2 mul: ok 12',
        'assistant: 12',
      ],
    },
  },
  {
    name: 'parallel calls',
    about: 'Several calls in one reply run as one batch; results are appended in call order.',
    setup: setup([
      toolCalls(call('mul', { a: 2, b: 5 }), call('add', { a: 1, b: 2 }), call('mul', { a: 3, b: 3 })),
      text('10, 3 and 9'),
    ]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: '10, 3 and 9',
      transcript: [
        USER,
        'assistant: [call_1 mul, call_2 add, call_3 mul]',
        'tool call_1 mul: ok 10',
        'tool call_2 add: ok 3',
        'tool call_3 mul: ok 9',
        'assistant: 10, 3 and 9',
      ],
    },
  },
  {
    name: 'unknown tool',
    about: 'A call to a tool that does not exist gets an error result listing the tools; the turn goes on.',
    setup: setup([toolCalls(call('frobnicate', {})), text('I cannot do that.')]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: 'I cannot do that.',
      transcript: [
        USER,
        'assistant: [call_1 frobnicate]',
        /^tool call_1 frobnicate: error Unknown tool 'frobnicate'\. Available tools: .*add/,
        'assistant: I cannot do that.',
      ],
    },
  },
  {
    name: 'invalid arguments',
    about: 'Arguments the schema rejects give an error naming the field; the tool never runs; the model fixes its call.',
    setup: setup([toolCalls(call('add', { a: 1, b: 'two' })), toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: '3',
      transcript: [
        USER,
        'assistant: [call_1 add]',
        /^tool call_1 add: error .*\bb\b/,
        'assistant: [call_2 add]',
        'tool call_2 add: ok 3',
        'assistant: 3',
      ],
    },
    verify(_result, run) {
      check(run.probe.executed.join(',') === 'add', `add must run once (with valid input), ran: ${run.probe.executed.join(',')}`);
    },
  },
  {
    name: 'arguments not JSON',
    about: 'A call whose arguments were not valid JSON gets an error result and does not run.',
    setup: setup([toolCalls(call('add', '{"a": 1,', { inputError: 'Unexpected end of JSON input' })), text('Sorry.')]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [USER, 'assistant: [call_1 add]', /^tool call_1 add: error .*not valid JSON/, 'assistant: Sorry.'],
    },
    verify(_result, run) {
      check(run.probe.executed.length === 0, 'no tool may run');
    },
  },
  {
    name: 'tool throws',
    about: "A tool's thrown error becomes its error result, never a crash.",
    setup: setup([toolCalls(call('boom')), text('The disk is full.')]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 boom]',
        "tool call_1 boom: error Error calling tool 'boom': Error: disk full",
        'assistant: The disk is full.',
      ],
    },
  },
  {
    name: 'policy deny',
    about: 'A denied call gets an error result and no approval is asked.',
    setup: withApprover(
      [toolCalls(call('deploy', { service: 'api' })), text('Not allowed.')],
      approver(() => ({})),
      { dispatcher: { permissions: { deny: ['deploy'], allow: ['boom', 'escalate', 'finish', 'slow'] } } },
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [USER, 'assistant: [call_1 deploy]', /^tool call_1 deploy: error .*\bden(y|ied)\b/i, 'assistant: Not allowed.'],
    },
    verify(_result, run) {
      check(run.probe.approvals.length === 0, 'a denied call must not be sent for approval');
      check(run.probe.executed.length === 0, 'a denied call must not run');
    },
  },
  {
    name: 'max iterations',
    about: 'After maxIterations rounds the next call is a forced final one without tools.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 })), text('3')], { limits: { maxIterations: 1 } }),
    expected: {
      status: 'stopped',
      stopReason: 'max_iterations',
      output: '3',
      transcript: [USER, 'assistant: [call_1 add]', 'tool call_1 add: ok 3', 'assistant: 3'],
    },
    verify(_result, run) {
      const final = run.model.calls[1];
      check(
        final?.toolChoice === 'none' && final.tools.length === 0,
        'the forced final request must have no tools and toolChoice none',
      );
    },
  },
  {
    name: 'forced final drops tool calls',
    about: 'Tool calls in a forced final reply are dropped; its text is the answer.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 })), toolCalls(call('add', { a: 3, b: 4 }), { text: 'It is 3.' })], {
      limits: { maxIterations: 1 },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'max_iterations',
      output: 'It is 3.',
      transcript: [USER, 'assistant: [call_1 add]', 'tool call_1 add: ok 3', 'assistant: It is 3.'],
    },
    verify(_result, run) {
      check(run.probe.executed.length === 1, 'the dropped call must not run');
    },
  },
  {
    name: 'loop detected',
    about: 'An identical batch repeated loopThreshold times is skipped and one forced final call ends the turn.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 })), toolCalls(call('add', { a: 1, b: 2 })), text('3, as before.')], {
      limits: { loopThreshold: 2 },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'loop_detected',
      output: '3, as before.',
      transcript: [
        USER,
        'assistant: [call_1 add]',
        'tool call_1 add: ok 3',
        'assistant: [call_2 add]',
        /^tool call_2 add: error skipped: repeated/,
        'assistant: 3, as before.',
      ],
    },
    verify(_result, run) {
      check(run.probe.executed.length === 1, 'the repeated batch must not run');
      check(run.model.calls[2]?.toolChoice === 'none', 'the call after a loop must be a forced final one');
    },
  },
  {
    name: 'loop-exempt tool',
    about: "Calls of a tool defined with loopExempt never count as a loop (the dispatcher's list joins the limits).",
    setup: setup(
      [
        toolCalls(call('search', { q: 'x' })),
        toolCalls(call('search', { q: 'x' })),
        toolCalls(call('search', { q: 'x' })),
        text('Nothing found.'),
      ],
      { limits: { loopThreshold: 2 } },
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 search]',
        'tool call_1 search: ok "no notes about x"',
        'assistant: [call_2 search]',
        'tool call_2 search: ok "no notes about x"',
        'assistant: [call_3 search]',
        'tool call_3 search: ok "no notes about x"',
        'assistant: Nothing found.',
      ],
    },
  },
  {
    name: 'model call budget',
    about: 'With maxModelCalls used up the turn stops with budget_exhausted after the round.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }))], { limits: { budget: { maxModelCalls: 1 } } }),
    expected: {
      status: 'stopped',
      stopReason: 'budget_exhausted',
      output: null,
      text: '',
      transcript: [USER, 'assistant: [call_1 add]', 'tool call_1 add: ok 3'],
    },
  },
  {
    name: 'token budget',
    about: 'A reply that exceeds the token budget stops the turn; its calls get "not executed" results.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }), { usage: { inputTokens: 8, outputTokens: 5 } })], {
      limits: { budget: { maxTotalTokens: 10 } },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'budget_exhausted',
      output: null,
      transcript: [USER, 'assistant: [call_1 add]', /^tool call_1 add: error not executed: .*total token budget/],
    },
    verify(_result, run) {
      check(run.probe.executed.length === 0, 'no tool may run once the budget is exceeded');
    },
  },
  {
    name: 'calls per reply',
    about:
      'Calls of one reply past limits.maxCallsPerReply never run; each gets a "not executed" result saying why, after the results of the calls that ran.',
    setup: setup(
      [toolCalls(call('add', { a: 1, b: 2 }), call('mul', { a: 2, b: 5 }), call('add', { a: 3, b: 4 })), text('3 and 10')],
      { limits: { maxCallsPerReply: 2 } },
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: '3 and 10',
      transcript: [
        USER,
        'assistant: [call_1 add, call_2 mul, call_3 add]',
        'tool call_1 add: ok 3',
        'tool call_2 mul: ok 10',
        'tool call_3 add: error not executed: the reply asked for 3 tool calls; limits.maxCallsPerReply is 2.',
        'assistant: 3 and 10',
      ],
    },
    verify(_result, run) {
      check(
        isDeepStrictEqual(run.probe.executed, ['add', 'mul']),
        `only the first two calls may run, ran ${JSON.stringify(run.probe.executed)}`,
      );
    },
  },
  {
    name: 'tool call budget cuts a batch',
    about:
      'A batch larger than what maxToolCalls has left runs only what fits; the rest get "not executed" results and the turn stops at the round.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }), call('mul', { a: 2, b: 5 }))], {
      limits: { budget: { maxToolCalls: 1 } },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'budget_exhausted',
      output: null,
      transcript: [
        USER,
        'assistant: [call_1 add, call_2 mul]',
        'tool call_1 add: ok 3',
        "tool call_2 mul: error not executed: the turn's tool call budget is used up (limits.budget.maxToolCalls is 1).",
      ],
    },
    verify(_result, run) {
      check(
        isDeepStrictEqual(run.probe.executed, ['add']),
        `only the call within the budget may run, ran ${JSON.stringify(run.probe.executed)}`,
      );
    },
  },
  {
    name: 'approval: approve',
    about: 'A call that needs approval runs once approved; approve sees the parked call.',
    setup: withApprover(
      [toolCalls(call('deploy', { service: 'api' })), text('Deployed.')],
      approver((p) => Object.fromEntries(p.map((x) => [x.call.id, { type: 'approve' }]))),
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: 'Deployed.',
      transcript: [USER, 'assistant: [call_1 deploy]', 'tool call_1 deploy: ok "deployed api"', 'assistant: Deployed.'],
    },
    verify(_result, run) {
      check(
        run.probe.approvals.length === 1 && run.probe.approvals[0]?.[0]?.call.name === 'deploy',
        'approve must be asked once, about deploy',
      );
    },
  },
  {
    name: 'approval: reject',
    about: 'A rejected call gets a denial result with the reason and never runs.',
    setup: withApprover(
      [toolCalls(call('deploy', { service: 'api' })), text('Not deployed.')],
      approver(() => ({ call_1: { type: 'reject', reason: 'not on a Friday' } })),
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 deploy]',
        /^tool call_1 deploy: error rejected: not on a Friday\./,
        'assistant: Not deployed.',
      ],
    },
    verify(_result, run) {
      check(run.probe.executed.length === 0, 'a rejected call must not run');
    },
  },
  {
    name: 'approval: expire',
    about: 'A parked call left without a decision expires: rejected with reason "approval expired".',
    setup: withApprover(
      [toolCalls(call('deploy', { service: 'api' })), text('No answer, not deployed.')],
      approver(() => ({})),
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 deploy]',
        /^tool call_1 deploy: error rejected: approval expired/,
        'assistant: No answer, not deployed.',
      ],
    },
    verify(_result, run) {
      check(run.probe.executed.length === 0, 'an expired call must not run');
    },
  },
  {
    name: 'approval: mixed batch',
    about: 'Allowed, approved and rejected calls of one batch are merged in call order.',
    setup: withApprover(
      [
        toolCalls(call('add', { a: 1, b: 2 }), call('deploy', { service: 'api' }), call('deploy', { service: 'db' })),
        text('Deployed api only.'),
      ],
      approver(() => ({ call_2: { type: 'approve' }, call_3: { type: 'reject' } })),
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 add, call_2 deploy, call_3 deploy]',
        'tool call_1 add: ok 3',
        'tool call_2 deploy: ok "deployed api"',
        /^tool call_3 deploy: error rejected\./,
        'assistant: Deployed api only.',
      ],
    },
    verify(_result, run) {
      check(
        run.probe.approvals[0]?.map((p) => p.call.id).join(',') === 'call_2,call_3',
        'approve must be asked about call_2 and call_3 only',
      );
    },
  },
  {
    name: 'approval: remember',
    about: 'Approve-and-remember for a tool reaches the dispatcher: a later call of it is not parked.',
    setup: withApprover(
      [toolCalls(call('deploy', { service: 'api' })), toolCalls(call('deploy', { service: 'db' })), text('Both deployed.')],
      approver((p) => Object.fromEntries(p.map((x) => [x.call.id, { type: 'approve', remember: 'tool' }]))),
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 deploy]',
        'tool call_1 deploy: ok "deployed api"',
        'assistant: [call_2 deploy]',
        'tool call_2 deploy: ok "deployed db"',
        'assistant: Both deployed.',
      ],
    },
    verify(_result, run) {
      check(run.probe.approvals.length === 1, `approve must be asked once, was asked ${run.probe.approvals.length} times`);
    },
  },
  {
    name: 'approval: suspend and resume',
    about: 'Without approve the turn suspends with JSON state and pending calls; resuming with a decision finishes it.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }), call('deploy', { service: 'api' })), text('Deployed, and 1 + 2 = 3.')]),
    expected: { status: 'suspended', transcript: [USER, 'assistant: [call_1 add, call_2 deploy]'] },
    verify(result) {
      check(
        result.pending?.length === 1 && result.pending[0]?.call.id === 'call_2',
        'pending must hold the deploy call (call_2)',
      );
      // Plain JSON only: no undefined fields, Dates, Maps or class instances that a round trip would change.
      for (const [what, value] of [
        ['state', result.state],
        ['transcript', result.transcript],
        ['pending', result.pending],
      ] as const) {
        check(
          isDeepStrictEqual(JSON.parse(JSON.stringify(value)), value),
          `the suspended ${what} must be plain JSON (it changed in a JSON round trip)`,
        );
      }
    },
    resume: {
      decisions: { call_2: { type: 'approve' } },
      expected: {
        status: 'stopped',
        stopReason: 'completed',
        output: 'Deployed, and 1 + 2 = 3.',
        transcript: [
          USER,
          'assistant: [call_1 add, call_2 deploy]',
          'tool call_1 add: ok 3',
          'tool call_2 deploy: ok "deployed api"',
          'assistant: Deployed, and 1 + 2 = 3.',
        ],
      },
      verify(_result, run) {
        check(run.probe.executed.filter((t) => t === 'add').length === 1, 'the held add call must not run again on resume');
      },
    },
  },
  {
    name: 'approval: suspend and reject on resume',
    about: 'A suspended turn resumed with a rejection gives the denial result.',
    setup: setup([toolCalls(call('deploy', { service: 'api' })), text('Not deployed.')]),
    expected: { status: 'suspended', transcript: [USER, 'assistant: [call_1 deploy]'] },
    resume: {
      decisions: { call_1: { type: 'reject', reason: 'change freeze' } },
      expected: {
        status: 'stopped',
        stopReason: 'completed',
        transcript: [
          USER,
          'assistant: [call_1 deploy]',
          /^tool call_1 deploy: error rejected: change freeze\./,
          'assistant: Not deployed.',
        ],
      },
    },
  },
  {
    name: 'output repair',
    about:
      'Final text that is not valid JSON or does not match the schema goes back to the model with the reason; the fixed answer is the parsed output.',
    setup: setup([text('three'), text('{"answer": "3"}'), text('{"answer": 3}')], { output: z.object({ answer: z.number() }) }),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: { answer: 3 },
      transcript: [
        USER,
        'assistant: three',
        /^user: .*JSON/,
        'assistant: {"answer": "3"}',
        /^user: .*answer/,
        'assistant: {"answer": 3}',
      ],
    },
  },
  {
    name: 'output invalid',
    about: 'When repairs run out the turn fails with output_invalid.',
    setup: setup([text('nope'), text('still nope')], {
      output: z.object({ answer: z.number() }),
      limits: { maxOutputRepairs: 1 },
    }),
    expected: {
      status: 'failed',
      errorKind: 'output_invalid',
      output: null,
      transcript: [USER, 'assistant: nope', /^user: .*JSON/, 'assistant: still nope'],
    },
  },
  {
    name: 'model failure',
    about: 'A model that throws fails the turn with kind model_error and its message.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 })), fail(new Error('the model server is down'))]),
    expected: {
      status: 'failed',
      errorKind: 'model_error',
      errorMessage: /the model server is down/,
      transcript: [USER, 'assistant: [call_1 add]', 'tool call_1 add: ok 3'],
    },
  },
  {
    name: 'model failure with a TurnError',
    about: 'An error carrying a turnError (as model adapters throw) is used as is.',
    setup: setup([
      fail(Object.assign(new Error('401'), { turnError: { kind: 'auth_failed', message: 'The API key was rejected.' } })),
    ]),
    expected: { status: 'failed', errorKind: 'auth_failed', errorMessage: /^The API key was rejected\.$/, transcript: [USER] },
  },
  {
    name: 'script overrun',
    about: 'A model call past the end of a script fails the turn with a message naming the missing step.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }))]),
    expected: {
      status: 'failed',
      errorKind: 'model_error',
      errorMessage: /step 2/,
      transcript: [USER, 'assistant: [call_1 add]', 'tool call_1 add: ok 3'],
    },
  },
  {
    name: 'invalid model response',
    about: 'A reply with a call id holding a control character fails the turn before anything runs.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }, { id: 'x' }), call('add', { a: 3, b: 4 }, { id: 'y\u0007' }))]),
    expected: { status: 'failed', errorKind: 'invalid_model_response', transcript: [USER] },
    verify(_result, run) {
      check(run.probe.executed.length === 0, 'no tool may run');
    },
  },
  {
    name: 'call ids: one id twice in a reply',
    about: 'Two calls with one id both run: the second gets a derived id, and each result pairs with its own call.',
    setup: setup([
      toolCalls(call('add', { a: 1, b: 2 }, { id: 'x' }), call('mul', { a: 3, b: 4 }, { id: 'x' })),
      text('3 and 12'),
    ]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [USER, 'assistant: [x add, x~2 mul]', 'tool x add: ok 3', 'tool x~2 mul: ok 12', 'assistant: 3 and 12'],
    },
    verify(result, run) {
      check(run.probe.executed.join(',') === 'add,mul', `both tools must run once, ran: ${run.probe.executed.join(',')}`);
      const sent = run.model.calls[1]?.messages.flatMap((m) => (m.role === 'tool' ? [m.result.callId] : []));
      check(sent?.join(',') === 'x,x~2', `the next request must pair each result with its call's id, got ${String(sent)}`);
      const assistant = result.transcript.find((m) => m.role === 'assistant' && m.toolCalls.length === 2);
      const second = assistant?.role === 'assistant' ? assistant.toolCalls[1] : undefined;
      check(second?.originalId === 'x', "the derived call must keep the model's id as originalId");
    },
  },
  {
    name: 'call ids: an id reused in a later round',
    about: 'A call whose id the model used in an earlier round is a new call: it runs, under a derived id.',
    setup: setup([
      toolCalls(call('add', { a: 1, b: 2 }, { id: 'c' })),
      toolCalls(call('mul', { a: 3, b: 4 }, { id: 'c' })),
      text('12'),
    ]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [c add]',
        'tool c add: ok 3',
        'assistant: [c~2 mul]',
        'tool c~2 mul: ok 12',
        'assistant: 12',
      ],
    },
    verify(_result, run) {
      check(run.probe.executed.join(',') === 'add,mul', `both tools must run once, ran: ${run.probe.executed.join(',')}`);
    },
  },
  {
    name: 'call ids: an id reused in a later round, behind approval',
    about: 'A call behind approval whose id was used in an earlier round is asked about and decided on its own.',
    setup: withApprover(
      [
        toolCalls(call('deploy', { service: 'api' }, { id: 'c' })),
        toolCalls(call('deploy', { service: 'db' }, { id: 'c' })),
        text('Deployed api; db was rejected.'),
      ],
      approver((p) =>
        Object.fromEntries(p.map((x) => [x.call.id, x.call.id === 'c' ? { type: 'approve' } : { type: 'reject' }])),
      ),
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [c deploy]',
        'tool c deploy: ok "deployed api"',
        'assistant: [c~2 deploy]',
        /^tool c~2 deploy: error rejected/,
        'assistant: Deployed api; db was rejected.',
      ],
    },
    verify(_result, run) {
      const asked = run.probe.approvals.map((p) => p.map((x) => x.call.id).join(',')).join(' then ');
      check(asked === 'c then c~2', `approve must be asked about c, then about c~2; was asked about ${asked}`);
      check(run.probe.executed.join(',') === 'deploy', 'only the approved deploy may run');
    },
  },
  {
    name: 'approval: a hook-rewritten call runs the input approved',
    about: 'A before-hook rewrites a parked call: the person sees the rewritten input, and that input is what runs.',
    setup: withApprover(
      [toolCalls(call('deploy', { service: 'api' })), text('Deployed a dry run.')],
      approver((p) => Object.fromEntries(p.map((x) => [x.call.id, { type: 'approve' }]))),
      {
        dispatcher: {
          hooks: {
            before: [
              {
                name: 'dry-run',
                run: (info) =>
                  info.call.name === 'deploy'
                    ? { kind: 'rewrite', input: { service: `${(info.input as { service: string }).service}-dry-run` } }
                    : undefined,
              },
            ],
          },
        },
      },
    ),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 deploy]',
        'tool call_1 deploy: ok "deployed api-dry-run"',
        'assistant: Deployed a dry run.',
      ],
    },
    verify(_result, run) {
      const shown = run.probe.approvals[0]?.[0]?.input;
      check(
        JSON.stringify(shown) === JSON.stringify({ service: 'api-dry-run' }),
        `the person must be shown the rewritten input, got ${JSON.stringify(shown)}`,
      );
    },
  },
  {
    name: 'cancel mid-tool',
    about: 'An abort while a tool runs cancels the turn, aborts the tool and closes its call with a cancelled result.',
    setup: setup([toolCalls(call('slow'))], { abortable: true }),
    expected: { status: 'cancelled', transcript: [USER, 'assistant: [call_1 slow]', /^tool call_1 slow: error cancelled/] },
    verify(_result, run) {
      check(run.probe.toolSignalAborted, "the running tool's signal must be aborted");
    },
  },
  {
    name: 'cancel keeps finished results',
    about: 'A tool that finished before the cancel keeps its real result; only the call that was stopped is cancelled.',
    setup: setup([toolCalls(call('add', { a: 1, b: 2 }), call('slow'))], { abortable: true }),
    expected: {
      status: 'cancelled',
      transcript: [USER, 'assistant: [call_1 add, call_2 slow]', 'tool call_1 add: ok 3', /^tool call_2 slow: error cancelled/],
    },
    verify(_result, run) {
      check(run.probe.executed.join(',') === 'add,slow', `add then slow must run, ran: ${run.probe.executed.join(',')}`);
    },
  },
  {
    name: 'cancel during a model call',
    about: 'An abort while the model is called cancels the turn.',
    setup: setup(
      (abort) => [
        () => {
          abort.abort('the user pressed stop');
          return fail(Object.assign(new Error('The model call was aborted.'), { name: 'AbortError' }));
        },
      ],
      { abortable: true },
    ),
    expected: { status: 'cancelled', transcript: [USER] },
  },
  {
    name: 'hook stop',
    about: 'An after-hook that sets stop ends the turn with hook_stopped and its reason as output.',
    setup: setup([toolCalls(call('finish'))], {
      dispatcher: {
        hooks: {
          after: [
            {
              name: 'handoff',
              run: (result) => (result.name === 'finish' ? { stop: { reason: 'handed off to a person' } } : undefined),
            },
          ],
        },
      },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'hook_stopped',
      output: 'handed off to a person',
      transcript: [USER, 'assistant: [call_1 finish]', 'tool call_1 finish: ok "handed off"'],
    },
  },
  {
    name: 'model override',
    about: "A tool's model override applies to the next model call only.",
    setup: setup([toolCalls(call('escalate')), toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        USER,
        'assistant: [call_1 escalate]',
        'tool call_1 escalate: ok "escalated"',
        'assistant: [call_2 add]',
        'tool call_2 add: ok 3',
        'assistant: 3',
      ],
    },
    verify(_result, run) {
      const [first, second, third] = run.model.calls;
      check(first?.modelOverride === undefined, 'the first call has no override');
      check(
        second?.modelOverride === 'big-model',
        `the call after escalate must use big-model, got ${String(second?.modelOverride)}`,
      );
      check(third?.modelOverride === undefined, 'the override applies once');
    },
  },
];

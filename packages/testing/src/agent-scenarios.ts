// The multi-agent conformance corpus (docs/agents.md): scripted trees of agents, a scripted model per
// agent, with hand-written expectations written from docs/turn-contract.md's delegating rows. Every
// interpreter that runs multi-agent turns gives exactly these transcripts and outcomes. A corpus of
// its own, beside `scenarios`: an interpreter of one agent (a minimal one, say) still passes that one.

import type { ApprovalDecision, Message, Model, ParkedCall, TurnLimitsInput } from '@turnkit/core';
import { defineTool, type ToolDefinition } from '@turnkit/dispatch';
import { z } from 'zod';
import { check, type ExpectedOutcome } from './scenarios.js';
import { call, fail, scriptedModel, text, toolCalls, type ScriptedModel, type ScriptStep } from './scripted.js';
import { compareOutcome } from './run-scenario.js';
import type { ConformanceResult } from './types.js';

/** An agent of a scenario's tree, as `runTurn` of @turnkit/inline takes it in `delegates` and `handoffs`. */
export interface ScenarioAgent {
  /** The agent's name, as `transfer_task` and `handoff` name it. */
  readonly name: string;
  /** What the agent does, shown to the model that may delegate or hand off to it. */
  readonly description: string;
  /** The agent's own scripted model. */
  readonly model: Model;
  /** The agent's system prompt. */
  readonly system?: string;
  /** The agent's tools. */
  readonly tools?: readonly ToolDefinition<any>[];
  /** The agent's own limits (a child's budgets are cut to what its parent has left). */
  readonly limits?: TurnLimitsInput;
  /** The agents it may give a task to (`transfer_task`). */
  readonly delegates?: readonly ScenarioAgent[];
  /** The agents it may hand the turn to (`handoff`). */
  readonly handoffs?: readonly ScenarioAgent[];
  /** The models it may switch to (`change_model`). */
  readonly models?: readonly string[];
}

/** The options a multi-agent scenario passes to the interpreter under test: the root agent's and the turn's. */
export interface AgentScenarioOptions {
  /** The turn's id. */
  readonly id: string;
  /** The root agent's name. */
  readonly name: string;
  /** The root agent's scripted model. */
  readonly model: Model;
  /** The root agent's system prompt. */
  readonly system?: string;
  /** The root agent's tools. */
  readonly tools?: readonly ToolDefinition<any>[];
  /** The agents the root may give a task to (`transfer_task`). */
  readonly delegates?: readonly ScenarioAgent[];
  /** The agents the root may hand the turn to (`handoff`). */
  readonly handoffs?: readonly ScenarioAgent[];
  /** The models the root may switch to (`change_model`). */
  readonly models?: readonly string[];
  /** The turn's limits. */
  readonly limits?: TurnLimitsInput;
  /** The user's message. */
  readonly input: string;
  /** Decides parked calls, a child's included (`info.agentPath` names whose they are); absent: the turn suspends. */
  readonly approve?: (
    pending: readonly ParkedCall[],
    info: { readonly turnId: string; readonly agentPath?: readonly string[] },
  ) => Promise<Record<string, ApprovalDecision>>;
  /** Cancels the turn, and its child turns, when it aborts. */
  readonly signal?: AbortSignal;
}

/** What a multi-agent scenario reads from a result: a conformance result whose pending calls name their agents. */
export type AgentScenarioResult = ConformanceResult & {
  readonly childTranscripts?: Readonly<Record<string, readonly Message[]>>;
};

/** Runs a multi-agent turn (`runTurn` of @turnkit/inline takes these options as they are). */
export type RunAgents = (options: AgentScenarioOptions) => Promise<AgentScenarioResult>;
/** Continues a suspended multi-agent turn with decisions. */
export type ResumeAgents = (
  options: Omit<AgentScenarioOptions, 'input'> & {
    readonly state: unknown;
    readonly transcript: readonly Message[];
    readonly childTranscripts?: Readonly<Record<string, readonly Message[]>>;
    readonly decisions: Record<string, ApprovalDecision>;
  },
) => Promise<AgentScenarioResult>;

interface AgentProbe {
  readonly executed: string[];
  readonly approvals: { readonly pending: readonly ParkedCall[]; readonly agentPath?: readonly string[] }[];
}

interface AgentScenarioRun {
  readonly options: AgentScenarioOptions;
  /** The scripted model of each agent, by name. */
  readonly models: Readonly<Record<string, ScriptedModel>>;
  readonly probe: AgentProbe;
}

/** One multi-agent scenario: its tree, the parent's expected transcript and outcome, and extra checks. */
export interface AgentScenario {
  /** The scenario's name, the test's name. */
  readonly name: string;
  /** What it shows, in a sentence. */
  readonly about: string;
  /** Makes a fresh run: the options to pass the interpreter and what to record. */
  setup(): AgentScenarioRun;
  /** The outcome and transcript every interpreter must give. */
  readonly expected: ExpectedOutcome;
  /** Further checks of the result and of what ran. */
  verify?(result: AgentScenarioResult, run: AgentScenarioRun): void;
  /** For a scenario that suspends: the decisions to resume with, and what the resumed turn must give. */
  readonly resume?: {
    /** The decisions, by call id (a child's calls included). */
    readonly decisions: Record<string, ApprovalDecision>;
    /** The outcome and transcript after resuming. */
    readonly expected: ExpectedOutcome;
    /** Further checks of the resumed result. */
    verify?(result: AgentScenarioResult, run: AgentScenarioRun): void;
  };
}

const USER = 'user: When did the bridge open?';

function agentTools(probe: AgentProbe, abort?: AbortController) {
  const ran = <T>(name: string, value: T): T => {
    probe.executed.push(name);
    return value;
  };
  return {
    search: defineTool({
      name: 'search',
      description: 'Searches the notes.',
      input: z.object({ q: z.string() }),
      readOnly: true,
      execute: ({ q }) => ran('search', `notes on ${q}: opened in 1932`),
    }),
    publish: defineTool({
      name: 'publish',
      description: 'Publishes a page.',
      input: z.object({ title: z.string() }),
      needsApproval: true,
      execute: ({ title }) => ran('publish', `published ${title}`),
    }),
    slow: defineTool({
      name: 'slow',
      description: 'Runs until cancelled.',
      input: z.object({}),
      readOnly: true,
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          probe.executed.push('slow');
          ctx.signal.addEventListener('abort', () => reject(new Error('stopped')));
          abort?.abort('the user pressed stop');
        }),
    }),
  };
}

interface TreeOptions {
  readonly supervisor: readonly ScriptStep[];
  readonly researcher?: readonly ScriptStep[];
  readonly writer?: readonly ScriptStep[];
  readonly limits?: TurnLimitsInput;
  readonly researcherLimits?: TurnLimitsInput;
  readonly models?: readonly string[];
  readonly abortable?: boolean;
  readonly approve?: (pending: readonly ParkedCall[]) => Record<string, ApprovalDecision>;
}

/** A supervisor with a researcher to delegate to and a writer to hand off to, each with its own scripted model. */
function tree(options: TreeOptions): () => AgentScenarioRun {
  return () => {
    const probe: AgentProbe = { executed: [], approvals: [] };
    const controller = options.abortable === true ? new AbortController() : undefined;
    const tools = agentTools(probe, controller);
    const models = {
      supervisor: scriptedModel(options.supervisor),
      researcher: scriptedModel(options.researcher ?? []),
      writer: scriptedModel(options.writer ?? []),
    };
    const researcher: ScenarioAgent = {
      name: 'researcher',
      description: 'Finds facts in the notes.',
      system: 'You research.',
      model: models.researcher,
      tools: [tools.search, tools.publish, tools.slow],
      ...(options.researcherLimits === undefined ? {} : { limits: options.researcherLimits }),
    };
    const writer: ScenarioAgent = {
      name: 'writer',
      description: 'Writes the answer.',
      system: 'You write.',
      model: models.writer,
    };
    const decide = options.approve;
    const run: AgentScenarioOptions = {
      id: 'agents-turn',
      name: 'supervisor',
      model: models.supervisor,
      system: 'You lead.',
      delegates: [researcher],
      handoffs: [writer],
      input: 'When did the bridge open?',
      ...(options.models === undefined ? {} : { models: options.models }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(controller === undefined ? {} : { signal: controller.signal }),
      ...(decide === undefined
        ? {}
        : {
            approve: async (pending, info) => {
              probe.approvals.push(info.agentPath === undefined ? { pending } : { pending, agentPath: info.agentPath });
              return decide(pending);
            },
          }),
    };
    return { options: run, models, probe };
  };
}

const delegate = (task = 'When did the bridge open?') => call('transfer_task', { agent: 'researcher', task });

// ---------------------------------------------------------------------------------------------
// The corpus

/** The multi-agent scenarios every interpreter that runs trees of agents passes (`agentConformance`). */
export const agentScenarios: readonly AgentScenario[] = [
  {
    name: 'delegate, then hand off',
    about:
      "transfer_task runs the researcher as a child turn whose answer is the call's result; handoff makes the writer answer the rest of the turn.",
    setup: tree({
      supervisor: [toolCalls(delegate()), toolCalls(call('handoff', { agent: 'writer' }))],
      researcher: [toolCalls(call('search', { q: 'bridge' })), text('It opened in 1932.')],
      writer: [text('The bridge opened in 1932.')],
    }),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      output: 'The bridge opened in 1932.',
      transcript: [
        'system: You lead.',
        USER,
        'assistant: [call_1 transfer_task]',
        'tool call_1 transfer_task: ok "It opened in 1932."',
        'assistant: [call_2 handoff]',
        `tool call_2 handoff: ok "Handed off to the agent 'writer'."`,
        'system: You write.',
        'assistant: The bridge opened in 1932.',
      ],
    },
    verify(result, run) {
      const child = run.models.researcher?.calls[0];
      check(
        JSON.stringify(child?.messages) ===
          JSON.stringify([
            { role: 'system', content: 'You research.' },
            { role: 'user', content: 'When did the bridge open?' },
          ]),
        `the researcher must see its system prompt and the task only, saw ${JSON.stringify(child?.messages)}`,
      );
      check(
        run.probe.executed.join(',') === 'search',
        `the researcher's search must run once, ran: ${run.probe.executed.join(',')}`,
      );
      const usage = (result.state as { usage?: { modelCalls?: number } }).usage;
      check(usage?.modelCalls === 5, `the tree made 5 model calls (2 + 2 + 1), the state says ${String(usage?.modelCalls)}`);
    },
  },
  {
    name: 'a failed child is an error result',
    about: 'A child turn that fails answers the transfer_task call with an error result naming the agent; the parent goes on.',
    setup: tree({
      supervisor: [toolCalls(delegate()), text('The researcher is down.')],
      researcher: [fail('provider down')],
      limits: { maxModelRetries: 0 },
      researcherLimits: { maxModelRetries: 0 },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        'system: You lead.',
        USER,
        'assistant: [call_1 transfer_task]',
        /^tool call_1 transfer_task: error The agent 'researcher' failed: provider down/,
        'assistant: The researcher is down.',
      ],
    },
  },
  {
    name: "a child's parked call is decided from the parent",
    about: "approve sees the child's parked call with the agent path; the decision reaches the child, and its call runs once.",
    setup: tree({
      supervisor: [toolCalls(delegate('Publish the page.')), text('Done.')],
      researcher: [toolCalls(call('publish', { title: 'Bridge' })), text('Published.')],
      approve: () => ({ call_1: { type: 'approve' } }),
    }),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        'system: You lead.',
        USER,
        'assistant: [call_1 transfer_task]',
        'tool call_1 transfer_task: ok "Published."',
        'assistant: Done.',
      ],
    },
    verify(_result, run) {
      const asked = run.probe.approvals[0];
      check(
        asked?.agentPath?.join('/') === 'supervisor/researcher',
        `approve must see the path, got ${JSON.stringify(asked?.agentPath)}`,
      );
      check(asked?.pending[0]?.call.name === 'publish', 'approve must see the child call');
      check(run.probe.executed.join(',') === 'publish', `publish must run once, ran: ${run.probe.executed.join(',')}`);
    },
  },
  {
    name: "a parent suspended on a child's parked call",
    about:
      'Without approve the tree suspends with the child call pending (and its path); resumed with a decision, only that call runs.',
    setup: tree({
      supervisor: [toolCalls(delegate('Publish the page.')), text('Done.')],
      researcher: [toolCalls(call('publish', { title: 'Bridge' })), text('Published.')],
    }),
    expected: { status: 'suspended', transcript: ['system: You lead.', USER, 'assistant: [call_1 transfer_task]'] },
    verify(result) {
      const pending = result.pending?.[0];
      check(
        pending?.agentPath?.join('/') === 'supervisor/researcher',
        `pending must name the path, got ${JSON.stringify(pending)}`,
      );
    },
    resume: {
      decisions: { call_1: { type: 'approve' } },
      expected: {
        status: 'stopped',
        stopReason: 'completed',
        transcript: [
          'system: You lead.',
          USER,
          'assistant: [call_1 transfer_task]',
          'tool call_1 transfer_task: ok "Published."',
          'assistant: Done.',
        ],
      },
      verify(_result, run) {
        check(run.probe.executed.join(',') === 'publish', `publish must run once in all, ran: ${run.probe.executed.join(',')}`);
        check(run.models.supervisor?.calls.length === 2, 'the supervisor is called once before and once after');
      },
    },
  },
  {
    name: 'a cancel ends the whole tree',
    about:
      "An abort while the child's tool runs cancels the child and the parent; the child's call and the transfer get cancelled results.",
    setup: tree({ supervisor: [toolCalls(delegate())], researcher: [toolCalls(call('slow'))], abortable: true }),
    expected: {
      status: 'cancelled',
      transcript: [
        'system: You lead.',
        USER,
        'assistant: [call_1 transfer_task]',
        /^tool call_1 transfer_task: error cancelled: the turn was cancelled/,
      ],
    },
  },
  {
    name: 'budgets hold across the tree',
    about:
      "The child's budget is what the parent has left; its model calls count toward the parent's, which stops when they are used up.",
    setup: tree({
      supervisor: [toolCalls(delegate()), text('never asked')],
      researcher: [toolCalls(call('search', { q: 'bridge' })), text('It opened in 1932.')],
      limits: { budget: { maxModelCalls: 3 } },
    }),
    expected: {
      status: 'stopped',
      stopReason: 'budget_exhausted',
      transcript: [
        'system: You lead.',
        USER,
        'assistant: [call_1 transfer_task]',
        'tool call_1 transfer_task: ok "It opened in 1932."',
      ],
    },
    verify(_result, run) {
      check(run.models.supervisor?.calls.length === 1, 'the supervisor has no model call left after the child used two');
    },
  },
  {
    name: 'change_model for the rest of the turn',
    about: 'After change_model every model call asks for the chosen model (a forced final one too).',
    setup: tree({
      supervisor: [toolCalls(call('change_model', { model: 'big-model' })), text('Done.')],
      models: ['big-model'],
    }),
    expected: {
      status: 'stopped',
      stopReason: 'completed',
      transcript: [
        'system: You lead.',
        USER,
        'assistant: [call_1 change_model]',
        `tool call_1 change_model: ok "Switched to the model 'big-model'."`,
        'assistant: Done.',
      ],
    },
    verify(_result, run) {
      const overrides = run.models.supervisor?.calls.map((c) => c.modelOverride ?? null);
      check(
        JSON.stringify(overrides) === '[null,"big-model"]',
        `the second call must ask for big-model, got ${JSON.stringify(overrides)}`,
      );
    },
  },
];

/** Runs one multi-agent scenario (and its resume, when `resume` is given); throws an Error listing every difference. */
export async function runAgentScenario(scenario: AgentScenario, run: RunAgents, resume?: ResumeAgents): Promise<void> {
  const setup = scenario.setup();
  const result = await run(setup.options);
  const problems = compareOutcome(result, scenario.expected);
  const collect = (verify: () => void): void => {
    try {
      verify();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  };
  if (problems.length === 0) collect(() => scenario.verify?.(result, setup));
  if (problems.length === 0 && scenario.resume !== undefined && resume !== undefined) {
    // What a caller would store and read back in another process.
    const saved = JSON.parse(
      JSON.stringify({ state: result.state, transcript: result.transcript, childTranscripts: result.childTranscripts }),
    ) as { state: unknown; transcript: readonly Message[]; childTranscripts?: Record<string, readonly Message[]> };
    const { input: _input, ...rest } = setup.options;
    const resumed = await resume({ ...rest, ...saved, decisions: scenario.resume.decisions });
    problems.push(...compareOutcome(resumed, scenario.resume.expected).map((p) => `after resume: ${p}`));
    const verifyResume = scenario.resume.verify;
    if (problems.length === 0 && verifyResume !== undefined) collect(() => verifyResume(resumed, setup));
  }
  if (problems.length > 0) throw new Error(`Scenario '${scenario.name}' (${scenario.about}):\n- ${problems.join('\n- ')}`);
}

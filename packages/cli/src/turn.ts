// Running (or resuming) one turn for `turnkit run` / `turnkit resume`: build the model, hand the
// scenario to runTurn / streamTurn (or their resume variants), render the timeline, and write
// what the flags ask for (NDJSON, a trace file, a suspended-turn file). Returns the exit code.

import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { ApprovalDecision } from '@turnkit/core';
import { resumeTurn, runTurn, type ResumeTurnOptions, type RunTurnOptions, type TurnResult } from '@turnkit/inline';
import type { streamTurn } from '@turnkit/stream';
import pc from 'picocolors';
import { promptApprover } from './approve.js';
import { oneLine, UsageError } from './errors.js';
import { providerModel, type ProviderOptions } from './provider.js';
import { connectScenarioServers, type ScenarioServers } from './mcp-servers.js';
import { makeScenarioModel, type LoadedScenarioFile } from './scenario.js';
import { safeJson, safeText, shellCommand } from './safe-text.js';
import {
  checkWritablePath,
  claimSuspended,
  defaultSavePath,
  recordOutcome,
  saveSuspended,
  treeModelCalls,
  writeJsonFile,
  type ConsumedMark,
  type ReadSuspended,
} from './suspended.js';
import { Timeline } from './timeline.js';
import { activeTurn, definedProps } from '@turnkit/core/internal';
import { startObserver, traceContextText } from '@turnkit/store/internal';
import { agentTurnOptions } from './agent-options.js';
import { counting, scenarioAgents, type ScenarioAgents } from './scenario-agents.js';
import { agentName } from './commands/agents-file.js';

/** Exit codes: 0 stopped, 1 failed or cancelled, 2 usage error, 3 suspended (waiting for approval). */
export const EXIT = { ok: 0, failed: 1, usage: 2, suspended: 3 } as const;

export interface TurnCommandOptions {
  /** The scenario path as the user wrote it (for messages). */
  readonly scenarioFile: string;
  readonly scenario: LoadedScenarioFile;
  readonly stream: boolean;
  readonly json: boolean;
  readonly trace?: string;
  readonly save?: string;
  readonly provider: ProviderOptions | null;
  /** Set for `turnkit resume`. */
  readonly resume?: {
    readonly file: string;
    /** The checked file and the exact text it was read from (the claim checks it is unchanged). */
    readonly read: ReadSuspended;
    readonly decisions: Record<string, ApprovalDecision>;
  };
}

/** What a signal that ends the turn says in its `cancelled` outcome. */
const SIGNAL_REASONS: Readonly<Record<string, string>> = { SIGINT: 'interrupted with Ctrl+C', SIGTERM: 'terminated by SIGTERM' };

/** Runs the turn and reports it; resolves to the process exit code. */
export async function runTurnCommand(o: TurnCommandOptions): Promise<number> {
  // Everything that can be wrong is found before a tool runs or a resume file is claimed: the
  // output paths, and the model (a resumed one continues from the count the file records).
  if (o.save !== undefined) await checkWritablePath(o.save, '--save');
  if (o.trace !== undefined) await checkWritablePath(o.trace, '--trace');
  const { counter, label } = await pickModel(o);
  // A tree's agents, each model made where its script goes on (a resume), before anything is claimed.
  const agents = scenarioAgents(
    o.scenario,
    o.scenarioFile,
    o.resume === undefined ? undefined : { file: o.resume.file, agentModelCalls: o.resume.read.saved.agentModelCalls ?? {} },
  );
  // The scenario's MCP servers are reached before anything is claimed; their tools join the scenario's.
  const servers = await connectScenarioServers(o.scenario, o.scenarioFile, o.resume?.read.saved.mcp);
  if (servers.changed.length > 0) process.stderr.write(changedToolsWarning(servers.changed));
  try {
    const scenario = servers.tools.length === 0 ? o.scenario : { ...o.scenario, tools: [...o.scenario.tools, ...servers.tools] };
    return await runWithSignals({ ...o, scenario }, { counter, agents }, label, servers);
  } finally {
    await servers.close();
  }
}

/** Said before a resume runs anything: the person approved calls to tools as they were. */
export function changedToolsWarning(changed: readonly string[]): string {
  return `${pc.yellow('!')} MCP tools changed (input schema or annotations) since this turn was saved: ${changed.map((name) => safeText(name)).join(', ')}. Approved calls to them are not run; they get an error result and the model may call them again.\n`;
}

async function runWithSignals(
  o: TurnCommandOptions,
  { counter, agents }: Models,
  label: string,
  servers: ScenarioServers,
): Promise<number> {
  // One approval, one execution: the file is marked as used, durably, before any approved tool
  // runs; a second resume of it (concurrent or later) is refused even if this process dies.
  const claim = o.resume === undefined ? undefined : await claimSuspended(o.resume.file, o.resume.read);

  const interactive = !o.json && process.stdin.isTTY === true && process.stdout.isTTY === true;
  const timeline = new Timeline({
    write: (text) => void process.stdout.write(text),
    spinner: !o.json && process.stderr.isTTY === true,
    streaming: o.stream,
    checksOutput: o.scenario.output !== undefined,
  });
  // Ctrl+C and SIGTERM cancel the turn (a second one ends the process at once); the outcome is
  // then printed and bin.ts exits, not waiting for a tool or model that ignores its signal.
  const controller = new AbortController();
  const interrupt = (signal: NodeJS.Signals): void => controller.abort(SIGNAL_REASONS[signal] ?? `stopped by ${signal}`);
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    return await runAndReport(o, { counter, agents, label, controller, timeline, interactive, claim, servers });
  } finally {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
  }
}

/** The models of a run: the scenario's (counted), and its tree's agents with theirs. */
interface Models {
  readonly counter: ReturnType<typeof counting>;
  readonly agents: ScenarioAgents;
}

interface RunParts extends Models {
  readonly label: string;
  readonly controller: AbortController;
  readonly timeline: Timeline;
  readonly interactive: boolean;
  readonly claim: ConsumedMark | undefined;
  readonly servers: ScenarioServers;
}

async function runAndReport(
  o: TurnCommandOptions,
  { counter, agents: tree, label, controller, timeline, interactive, claim, servers }: RunParts,
): Promise<number> {
  const saved = o.resume?.read.saved;
  const turnId = saved?.state.id ?? `turn-${randomUUID().slice(0, 8)}`;
  const warn = (error: Error): void => void process.stderr.write(`${pc.yellow('!')} ${safeText(error.message)}\n`);
  // The agent's observer for this run, asked as a worker asks it for each activation of a stored turn.
  const observer = startObserver(
    o.scenario.observe,
    {
      turnId,
      agent: o.scenario.agent ?? agentName(o.scenarioFile),
      traceContext: saved?.traceContext ?? null,
      transcript: saved?.transcript ?? [],
    },
    warn,
  );
  const hooks = observer?.hooks;
  const shown = o.json ? undefined : timeline;

  let agent: ReturnType<typeof agentTurnOptions>;
  try {
    agent = agentTurnOptions(o.scenario, {
      tools: timeline.timed(o.scenario.tools),
      agents: tree,
      ...definedProps({ budgetUsage: saved?.budgetUsage, wrapExecution: hooks?.wrapExecution }),
    });
  } catch (error) {
    throw new UsageError(`Could not start the turn of ${o.scenarioFile}: ${oneLine(error)}`);
  }
  const options: RunTurnOptions = {
    model: counter.model,
    ...agent,
    signal: controller.signal,
    trace: o.json || o.trace !== undefined,
    ...definedProps({ onStep: both(shown?.onStep, hooks?.onStep), onEffect: both(shown?.onEffect, hooks?.onEffect) }),
    // Quitting at the prompt cancels the turn through the same controller as Ctrl+C elsewhere.
    ...(interactive
      ? { approve: promptApprover({ beforePrompt: () => timeline.stop(), cancel: (reason) => controller.abort(reason) }) }
      : {}),
  };

  if (!o.json) {
    timeline.header(
      o.scenarioFile,
      o.scenario.agent === undefined ? label : `agent ${o.scenario.agent} · ${label}`,
      o.scenario.tools.length,
    );
    if (o.resume === undefined) timeline.userInput(o.scenario.input);
    else {
      timeline.continueFrom(treeModelCalls(o.resume.read.saved.state));
      timeline.resumed(o.resume.decisions, o.resume.read.saved.pending);
    }
  }

  const started = performance.now();
  let result: TurnResult;
  try {
    result = await execute(o, { ...options, id: turnId }, timeline);
  } finally {
    timeline.stop();
  }
  // What the observer keeps for the next run (in a suspended turn's file), read before it hears the
  // end, as a worker writes it with the turn's last checkpoint.
  const kept = result.status === 'suspended' ? parseKept(traceContextText(observer, null, warn)) : undefined;
  try {
    observer?.end?.({ status: result.status });
  } catch (error) {
    warn(new Error(`observe: the observer's end() threw (${oneLine(error)}).`));
  }
  const elapsed = performance.now() - started;
  const modelCalls = (saved?.modelCalls ?? 0) + counter.count();

  let savedTo: string | undefined;
  if (result.status === 'suspended') {
    savedTo = o.save ?? o.resume?.file ?? defaultSavePath(result.state.id);
    await saveSuspended(
      savedTo,
      { path: o.scenario.path, sha256: o.scenario.sha256, ...definedProps({ agent: o.scenario.agent }) },
      { stream: o.stream, provider: o.provider },
      modelCalls,
      result,
      {
        agentModelCalls: tree.modelCalls(),
        ...definedProps({ mcp: servers.snapshot(result.pending ?? []), traceContext: kept }),
      },
    );
  }
  if (o.resume !== undefined && claim !== undefined && (savedTo === undefined || resolve(savedTo) !== resolve(o.resume.file))) {
    // The original stays marked consumed; say how the turn went on, for whoever tries it again.
    await recordOutcome(
      o.resume.file,
      o.resume.read.saved,
      claim,
      result.status,
      savedTo === undefined ? undefined : resolve(savedTo),
    );
  }
  if (o.trace !== undefined && result.trace !== undefined) await writeJsonFile(o.trace, result.trace);

  if (o.json) {
    printNdjson(result, savedTo);
    if (savedTo !== undefined) process.stderr.write(resumeHelp(savedTo, result));
  } else {
    timeline.outcome(result, elapsed);
    if (o.trace !== undefined)
      timeline.line(
        pc.dim(`trace saved to ${safeText(o.trace)} (check it with: ${shellCommand(['turnkit', 'replay', o.trace])})`),
      );
    if (savedTo !== undefined) process.stdout.write(resumeHelp(savedTo, result));
  }
  if (result.status === 'stopped') return EXIT.ok;
  if (result.status === 'suspended') return EXIT.suspended;
  return EXIT.failed;
}

async function execute(o: TurnCommandOptions, options: RunTurnOptions, timeline: Timeline): Promise<TurnResult> {
  // Loaded for --stream only: a turn run with runTurn starts without it.
  const { resumeStreamTurn, streamTurn } = o.stream
    ? await import('@turnkit/stream')
    : { resumeStreamTurn: null, streamTurn: null };
  try {
    if (o.resume === undefined) {
      const run: RunTurnOptions = { ...options, input: o.scenario.input };
      return streamTurn !== null ? await readStream(streamTurn(run), o.json ? null : timeline) : await runTurn(run);
    }
    const saved = o.resume.read.saved;
    const resume: ResumeTurnOptions = {
      ...options,
      state: saved.state,
      transcript: saved.transcript,
      decisions: o.resume.decisions,
      grants: saved.grants,
      // A tree waiting in a child: the child turns' transcripts go on where they were.
      ...definedProps({ childTranscripts: saved.childTranscripts }),
    };
    return resumeStreamTurn !== null
      ? await readStream(resumeStreamTurn(resume), o.json ? null : timeline)
      : await resumeTurn(resume);
  } catch (error) {
    // runTurn only throws for options it cannot start with: a scenario mistake (bad limits, two tools with one name, …).
    throw new UsageError(`Could not start the turn of ${o.scenarioFile}: ${oneLine(error)}`);
  }
}

/** One observer of the two given (the timeline's, the agent's), or none. */
function both<T>(
  first: ((value: T) => void) | undefined,
  second: ((value: T) => void) | undefined,
): ((value: T) => void) | undefined {
  if (first === undefined || second === undefined) return first ?? second;
  return (value) => {
    first(value);
    second(value);
  };
}

/** The observer's trace context to keep, as JSON text (`traceContextText`), parsed back. */
function parseKept(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}

/** Drains the stream; its text goes to the timeline, or nowhere under --json (stdout is NDJSON only). */
async function readStream(stream: ReturnType<typeof streamTurn>, timeline: Timeline | null): Promise<TurnResult> {
  for await (const event of stream) if (event.type === 'text_delta') timeline?.textDelta(event.text);
  return stream.result;
}

async function pickModel(o: TurnCommandOptions): Promise<{ counter: ReturnType<typeof counting>; label: string }> {
  if (o.provider !== null)
    return { counter: counting(await providerModel(o.provider)), label: `${o.provider.provider} ${o.provider.model}` };
  const resume = o.resume;
  const model = makeScenarioModel(
    o.scenario,
    o.scenarioFile,
    resume === undefined ? undefined : { file: resume.file, modelCalls: resume.read.saved.modelCalls },
  );
  if (model === undefined) {
    throw new UsageError(
      `${o.scenario.agent === undefined ? 'Scenario' : `Agent '${o.scenario.agent}' of`} ${o.scenarioFile} has no model: add \`model\` to it, or run it against a real one with --provider and --model.`,
    );
  }
  return { counter: counting(model), label: o.scenario.agent === undefined ? 'scenario model' : 'its model' };
}

/** Ids of the parked calls that have no decision yet. */
export function undecidedIds(pending: readonly { readonly call: { readonly id: string } }[], decisions: unknown): string[] {
  const decided = decisions !== null && typeof decisions === 'object' ? (decisions as Record<string, unknown>) : {};
  return pending.map((p) => p.call.id).filter((id) => !Object.hasOwn(decided, id));
}

/**
 * How to continue a suspended turn. Every argument of the printed commands is shell-quoted (a call
 * id comes from the model), so pasting a line runs turnkit with exactly these arguments.
 */
export function resumeHelp(file: string, result: Pick<TurnResult, 'pending' | 'state'>): string {
  // Calls decided in an earlier resume stay parked until the rest are decided; only the others need flags
  // (in a tree, the calls of the turn that waits: core's activeTurn).
  const ids = undecidedIds(result.pending ?? [], activeTurn(result.state).state.batch?.decisions);
  // A tree's pending calls are a child's: say whose (the path of agents), as the prompt does.
  const whose = (result.pending ?? []).flatMap((p) =>
    p.agentPath === undefined || !ids.includes(p.call.id)
      ? []
      : [`  ${safeText(p.call.id)} ${safeText(p.call.name)} · agent ${p.agentPath.map((a) => safeText(a)).join(' › ')}`],
  );
  const shown = file.startsWith('/') || file.startsWith('.') ? file : `./${file}`;
  const command = (flags: string[]): string => `  ${shellCommand(['turnkit', 'resume', shown])} ${flags.join(' ')}`;
  const lines = [
    '',
    `Saved the suspended turn to ${safeText(shown)}${resolve(file) === file ? '' : ` (${safeText(resolve(file))})`}.`,
    ...(whose.length === 0 ? [] : ['Pending calls of agents of the tree:', ...whose]),
    'Decide each pending call and continue the turn with:',
    command(ids.map((id) => shellCommand(['--approve', id]))),
    // `ID='reason'` is one shell word: the quoted id and the quoted reason, joined by `=`.
    command(ids.map((id) => `--reject ${shellCommand([id])}=${shellCommand(['reason for the model'])}`)),
    '--approve and --reject can be repeated and mixed, one per call id.',
    '',
  ];
  return lines.join('\n');
}

function printNdjson(result: TurnResult, savedTo: string | undefined): void {
  const out: string[] = [];
  const trace = result.trace;
  if (trace !== undefined) {
    out.push(JSON.stringify({ kind: 'initial', state: trace.initial }));
    trace.entries.forEach((entry, index) => {
      out.push(JSON.stringify({ kind: 'step', index, event: entry.event, state: entry.state, effects: entry.effects }));
    });
  }
  out.push(
    JSON.stringify({
      kind: 'result',
      status: result.status,
      ...definedProps({ stopReason: result.stopReason }),
      output: result.output,
      ...definedProps({ error: result.error }),
      ...definedProps({ reason: result.reason }),
      usage: result.usage,
      ...definedProps({ pending: result.pending }),
      ...definedProps({ savedTo }),
    }),
  );
  process.stdout.write(safeJson(`${out.join('\n')}\n`));
}

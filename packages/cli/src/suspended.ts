// The file a suspended turn is written to, and reading it back for `turnkit resume`. A resume file
// is data, never code: it is checked whole (its shape, and its state through core's
// parseTurnState) before anything is loaded, and the scenario it names is loaded only if the
// sha256 of that file's bytes is the one recorded when the turn was saved (see loadScenarioFile).
//
// One approval, one execution: before a resume runs any approved tool it claims the file (a lock
// file created exclusively, then the file atomically replaced by a copy marked `consumed`), so a
// second resume of the same file, concurrent or later, is refused even if the first one died
// after its tools ran.

import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseTurnState, undecided, type Message, type ParkedCall, type TurnState } from '@turnkit/core';
import { activeTurn, definedProps } from '@turnkit/core/internal';
import { createDispatcher, type Grant } from '@turnkit/dispatch';
import type { BudgetUsage } from '@turnkit/dispatch/internal';
import { MAX_TRACE_CONTEXT } from '@turnkit/store/internal';
import type { TurnResult } from '@turnkit/inline';
import { z } from 'zod';
import { oneLine, UsageError } from './errors.js';
import { PROVIDERS, type ProviderOptions } from './provider.js';
import { createLock, type ConsumedMark } from './resume-lock.js';
import { mustBeFile } from './scenario.js';
import { shellQuote } from './safe-text.js';

export const SUSPENDED_KIND = 'turnkit-suspended-turn';
/** Version 2 records the sha256 of the scenario file; version 1 files (without it) are refused. */
export const SUSPENDED_VERSION = 2;

/** Options of the run that carry over to `resume` (output flags such as --json do not). */
export interface SavedOptions {
  readonly stream: boolean;
  readonly provider: ProviderOptions | null;
}

export type { ConsumedMark } from './resume-lock.js';

/** What @turnkit/mcp's `connection.snapshot(pending)` returns, as saved in the file. */
export interface SavedMcp {
  readonly tools: { readonly [name: string]: string };
  readonly parked: readonly string[];
}

export interface SuspendedFile {
  readonly kind: typeof SUSPENDED_KIND;
  readonly version: typeof SUSPENDED_VERSION;
  /** Absolute path of the scenario the tools (and scripted model) come from. */
  readonly scenario: string;
  /** sha256 (hex) of the scenario file's bytes when the turn was saved; a resume loads only a scenario with this hash. */
  readonly scenarioSha256: string;
  /** The agent of the file's `agents` that ran (`turnkit run FILE --agent NAME`); absent for a scenario. */
  readonly agent?: string;
  readonly options: SavedOptions;
  /** Calls the scenario's own model answered so far: a resume makes its model with `{ startAt: modelCalls }`. */
  readonly modelCalls: number;
  readonly state: TurnState;
  readonly transcript: readonly Message[];
  readonly pending: readonly ParkedCall[];
  readonly grants: readonly Grant[];
  readonly budgetUsage?: BudgetUsage;
  /**
   * A tree waiting in a child turn (docs/agents.md): the transcripts of the child turns on the path
   * to it, by child turn id, as the suspended result kept them; the resume goes on with them.
   */
  readonly childTranscripts?: Readonly<Record<string, readonly Message[]>>;
  /** A tree: the model calls each agent of `delegates` and `handoffs` answered so far, by name (a resume makes its model with `{ startAt }`). */
  readonly agentModelCalls?: Readonly<Record<string, number>>;
  /**
   * For a scenario that names MCP servers: the fingerprint of each MCP tool's input schema and
   * annotations when the turn suspended, and which parked calls go to MCP tools. A resume
   * reconnects and compares: an approved call to a tool that changed is not run.
   */
  readonly mcp?: SavedMcp;
  /**
   * What the agent's observer (`observe`) kept for the next run of the turn (its `traceContext()`,
   * plain JSON of at most 4 KB): a resume gives it back to `observe`, as a worker does.
   */
  readonly traceContext?: unknown;
  /** Set once a resume claimed the file, before any approved tool ran. */
  readonly consumed?: ConsumedMark;
}

const json: z.ZodType = z.json();
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const toolCall = z.strictObject({ id: z.string(), name: z.string(), input: json, inputError: z.string().optional() });
const toolResult = z.strictObject({
  callId: z.string(),
  name: z.string(),
  output: json,
  isError: z.boolean(),
  stop: z.strictObject({ reason: z.string() }).optional(),
  modelOverride: z.string().optional(),
});
const message = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content: z.string() }),
  z.strictObject({ role: z.literal('user'), content: z.string() }),
  z.strictObject({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(toolCall),
    reasoning: z.string().optional(),
  }),
  z.strictObject({ role: z.literal('tool'), result: toolResult }),
]);
const grant = z.union([
  z.strictObject({ scope: z.literal('session') }),
  z.strictObject({ scope: z.literal('tool'), tool: z.string().min(1) }),
  z.strictObject({ scope: z.literal('tool'), pattern: z.string().min(1) }),
]);

const fileSchema = z.strictObject({
  kind: z.literal(SUSPENDED_KIND),
  version: z.literal(SUSPENDED_VERSION),
  scenario: z.string().min(1),
  scenarioSha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be the 64 hex digits of a sha256'),
  agent: z.string().min(1).max(200).optional(),
  options: z.strictObject({
    stream: z.boolean(),
    provider: z
      .strictObject({
        provider: z.enum(PROVIDERS),
        model: z.string().min(1),
        baseUrl: z.url({ protocol: /^https?$/ }).optional(),
      })
      .nullable(),
  }),
  modelCalls: count,
  // Checked by core's parseTurnState below (zod would rebuild its objects and drop own keys such as a `__proto__` call id).
  state: z.unknown(),
  transcript: z.array(message),
  // A tree's pending call names its agents (`agentPath`, docs/agents.md): read, so resume can say why it refuses a tree.
  pending: z.array(
    z.strictObject({
      call: toolCall,
      input: json.optional(),
      reason: z.string().optional(),
      agentPath: z.array(z.string()).optional(),
    }),
  ),
  grants: z.array(grant),
  childTranscripts: z.record(z.string(), z.array(message)).optional(),
  agentModelCalls: z.record(z.string().min(1).max(256), count).optional(),
  budgetUsage: z.strictObject({ total: count, perTool: z.record(z.string(), count) }).optional(),
  mcp: z.strictObject({ tools: z.record(z.string(), z.string().max(256)), parked: z.array(z.string()) }).optional(),
  traceContext: json
    .refine(
      (value) => JSON.stringify(value).length <= MAX_TRACE_CONTEXT,
      `must be at most ${MAX_TRACE_CONTEXT} characters of JSON`,
    )
    .optional(),
  consumed: z
    .strictObject({ at: z.string(), pid: count, outcome: z.string().optional(), savedTo: z.string().optional() })
    .optional(),
});

/** The default file name for a suspended turn: `./turnkit-suspended-<turnId>.json`. */
export function defaultSavePath(turnId: string): string {
  return `./turnkit-suspended-${turnId.replace(/[^a-zA-Z0-9_.-]/g, '_')}.json`;
}

/** What `saveSuspended` records about the scenario. */
export interface ScenarioRecord {
  readonly path: string;
  readonly sha256: string;
  /** The agent of the file's `agents` that ran, if one did. */
  readonly agent?: string;
}

/** Writes the suspended result to `path` (atomically). */
export async function saveSuspended(
  path: string,
  scenario: ScenarioRecord,
  options: SavedOptions,
  modelCalls: number,
  result: TurnResult,
  kept: {
    readonly mcp?: SavedMcp;
    readonly traceContext?: unknown;
    readonly agentModelCalls?: Readonly<Record<string, number>>;
  } = {},
): Promise<void> {
  const file: SuspendedFile = {
    kind: SUSPENDED_KIND,
    version: SUSPENDED_VERSION,
    scenario: scenario.path,
    scenarioSha256: scenario.sha256,
    ...definedProps({ agent: scenario.agent }),
    options,
    modelCalls,
    state: result.state,
    transcript: result.transcript,
    pending: result.pending ?? [],
    grants: result.grants ?? [],
    ...definedProps({ budgetUsage: result.budgetUsage, childTranscripts: result.childTranscripts }),
    ...(kept.agentModelCalls === undefined || Object.keys(kept.agentModelCalls).length === 0
      ? {}
      : { agentModelCalls: kept.agentModelCalls }),
    ...definedProps({ mcp: kept.mcp, traceContext: kept.traceContext }),
  };
  await writeJsonFile(path, file);
}

/**
 * Throws a UsageError naming `flag` unless `writeJsonFile(path)` can work: the path is not a
 * folder, and its folder exists and is writable. Checked before a turn runs, so a turn that
 * suspends is never lost to a mistyped path after its tools ran.
 */
export async function checkWritablePath(path: string, flag: string): Promise<void> {
  const target = resolve(path);
  const info = await stat(target).catch(() => null);
  if (info?.isDirectory() === true)
    throw new UsageError(
      `${flag} ${path} is a folder; give the path of a file in it, such as ${join(path, 'turn.json')}. Nothing was run.`,
    );
  const folder = dirname(target);
  const folderInfo = await stat(folder).catch(() => null);
  if (folderInfo?.isDirectory() !== true)
    throw new UsageError(
      `${flag} ${path}: the folder ${folder} does not exist; create it or give another path. Nothing was run.`,
    );
  try {
    await access(folder, constants.W_OK);
  } catch {
    throw new UsageError(`${flag} ${path}: the folder ${folder} is not writable; give another path. Nothing was run.`);
  }
}

/** Writes `value` as JSON to `path` atomically and durably: a temporary file, fsync, rename over `path`, fsync of the folder. */
export async function writeJsonFile(path: string, value: unknown): Promise<void> {
  const target = resolve(path);
  const temporary = `${target}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    const handle = await open(temporary, 'wx');
    try {
      await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new UsageError(`Could not write ${path}: ${oneLine(error)}.`);
  }
  await syncFolder(dirname(target));
}

async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems cannot fsync a folder; the rename itself is still atomic.
  }
}

/** A suspended-turn file as read: its checked content and the exact text it was read from. */
export interface ReadSuspended {
  readonly saved: SuspendedFile;
  readonly text: string;
}

/**
 * Reads and checks a suspended-turn file, whole, before anything it names is loaded. Throws a
 * UsageError (exit 2) that blames the file for any problem, and one that says so for a file a
 * resume already used.
 */
export async function readSuspended(file: string): Promise<ReadSuspended> {
  const path = resolve(file);
  await mustBeFile(path, file, 'suspended turn');
  const text = await readFile(path, 'utf8');
  const saved = parseSuspended(text, file);
  if (saved.consumed !== undefined) throw alreadyResumed(file, saved.consumed);
  return { saved, text };
}

function parseSuspended(text: string, file: string): SuspendedFile {
  const invalid = (why: string): UsageError =>
    new UsageError(
      `${file} is not a suspended turn that \`turnkit run\` wrote (${why}): it was changed since, or never was one; nothing was loaded or run.`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw invalid(`not JSON: ${oneLine(error)}`);
  }
  const version = (value as { version?: unknown } | null)?.version;
  if ((value as { kind?: unknown } | null)?.kind === SUSPENDED_KIND && version === 1) {
    throw new UsageError(
      `${file} was written by an older turnkit that did not record a hash of its scenario, so it cannot be resumed safely; run the scenario again to start a new turn.`,
    );
  }
  const parsed = fileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      issue === undefined
        ? 'unknown problem'
        : `at ${issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.')}: ${issue.message}`,
    );
  }
  const data = parsed.data;
  let state: TurnState;
  try {
    state = parseTurnState(data.state);
  } catch (error) {
    throw invalid(`at state: ${oneLine(error)}`);
  }
  // A tree waits in the child turn core's activeTurn names (docs/agents.md); a turn of one agent in itself.
  const acting = activeTurn(state).state;
  if (acting.status !== 'awaiting_approval' || acting.batch === null) {
    throw invalid(
      acting === state
        ? `its turn is not waiting for an approval: state.status is '${state.status}'`
        : `the child turn its tree waits on is not waiting for an approval: its status is '${acting.status}'`,
    );
  }
  // Core's undecided parked calls of the tree, each with its path of agents in a tree: the file's pending calls exactly.
  const open = undecided(state);
  const listed = data.pending;
  const same = (a: ParkedCall, b: (typeof listed)[number] | undefined): boolean =>
    b !== undefined && a.call.id === b.call.id && JSON.stringify(a.agentPath ?? null) === JSON.stringify(b.agentPath ?? null);
  if (open.length === 0 || open.length !== listed.length || open.some((p, i) => !same(p, listed[i]))) {
    const show = (calls: readonly { call: { id: string }; agentPath?: readonly string[] | undefined }[]): string =>
      calls.map((p) => (p.agentPath === undefined ? p.call.id : `${p.call.id} of ${p.agentPath.join(' > ')}`)).join(', ') ||
      'none';
    throw invalid(`its pending calls (${show(listed)}) are not the undecided parked calls of its state (${show(open)})`);
  }
  // The child turns' transcripts: exactly those of the child turns the tree waits in.
  const running = turnAndWaitedChildren(state)
    .slice(1)
    .map((s) => s.id);
  const kept = Object.keys(data.childTranscripts ?? {});
  if (data.childTranscripts === undefined ? running.length > 0 : kept.sort().join('\n') !== [...running].sort().join('\n'))
    throw invalid(
      `at childTranscripts: it keeps the transcripts of ${kept.join(', ') || 'no child turn'}, but its state waits in ${running.join(', ') || 'no child turn'}`,
    );
  const ids = listed.map((p) => p.call.id);
  const stray = data.mcp?.parked.find((id) => !ids.includes(id));
  if (stray !== undefined) throw invalid(`at mcp.parked: '${stray}' is not one of its pending calls (${ids.join(', ')})`);
  // The dispatcher's own checks of what it restores (a grant's tool name or pattern, the counts):
  // refused here, blaming the file, rather than when the turn starts.
  for (const [index, grant] of data.grants.entries()) {
    try {
      createDispatcher({ tools: [], grants: [grant] });
    } catch (error) {
      throw invalid(`at grants.${index}: ${oneLine(error)}`);
    }
  }
  if (data.budgetUsage !== undefined) {
    try {
      createDispatcher({ tools: [], budgetUsage: data.budgetUsage });
    } catch (error) {
      throw invalid(`at budgetUsage: ${oneLine(error)}`);
    }
  }
  if (data.modelCalls > state.usage.modelCalls) {
    throw invalid(`modelCalls is ${data.modelCalls}, more than the ${state.usage.modelCalls} model calls its state counts`);
  }
  // Each model call of a tree was answered by one agent's model: the counts add up to at most the tree's.
  const agentCalls = Object.values(data.agentModelCalls ?? {}).reduce((sum, n) => sum + n, 0);
  if (data.modelCalls + agentCalls > treeModelCalls(state)) {
    throw invalid(
      `at agentModelCalls: its agents' ${agentCalls} model calls and the scenario model's ${data.modelCalls} are more than the ${treeModelCalls(state)} its state counts`,
    );
  }
  return { ...(data as Omit<SuspendedFile, 'state'>), state } as SuspendedFile;
}

/** The model calls a saved turn made, its running child turns' included (a child's usage joins its parent's when it ends): the timeline numbers on from it. */
export const treeModelCalls = (state: TurnState): number =>
  turnAndWaitedChildren(state).reduce((calls, s) => calls + s.usage.modelCalls, 0);

/** The turn, then the child turns its tree waits in, outermost first (the turn alone for one agent). */
function turnAndWaitedChildren(state: TurnState): TurnState[] {
  const turns = [state];
  for (let s = state; s.status === 'delegating' && s.agents?.child != null; s = s.agents.child) turns.push(s.agents.child);
  return turns;
}

function alreadyResumed(file: string, mark: ConsumedMark): UsageError {
  const how =
    mark.outcome === undefined
      ? 'its approved calls ran then, or are running now'
      : mark.outcome === 'suspended' && mark.savedTo !== undefined
        ? `the turn was suspended again into ${mark.savedTo}`
        : `the turn ended ${mark.outcome}`;
  const next =
    mark.savedTo !== undefined ? `resume ${shellQuote(mark.savedTo)} instead` : 'run the scenario again to start a new turn';
  return new UsageError(
    `${file} was already resumed (at ${mark.at} by process ${mark.pid}; ${how}): one approval runs its tools once, so it cannot be resumed again; ${next}.`,
  );
}

/**
 * Claims `file` for one resume before any approved tool runs: creates `FILE.lock` exclusively,
 * checks the file is still exactly `text` (what was read and checked), then atomically replaces it
 * with a copy marked `consumed` (fsynced before this returns) and removes the lock. Throws a
 * UsageError, and changes nothing, when another resume holds the lock or got there first.
 */
export async function claimSuspended(file: string, read: ReadSuspended): Promise<ConsumedMark> {
  const path = resolve(file);
  const lock = `${path}.lock`;
  const mark: ConsumedMark = { at: new Date().toISOString(), pid: process.pid };
  await createLock(file, lock, mark);
  try {
    let now: string;
    try {
      now = await readFile(path, 'utf8');
    } catch (error) {
      throw new UsageError(`${file} disappeared before the resume could claim it (${oneLine(error)}); nothing was run.`);
    }
    if (now !== read.text) {
      const current = parseSuspended(now, file);
      if (current.consumed !== undefined) throw alreadyResumed(file, current.consumed);
      throw new UsageError(`${file} changed while this resume was starting; nothing was run. Run the resume again.`);
    }
    await writeJsonFile(path, { ...read.saved, consumed: mark });
  } finally {
    await unlink(lock).catch(() => undefined);
  }
  return mark;
}

/** Records how a claimed resume ended in the (still consumed) original file; best effort. */
export async function recordOutcome(
  file: string,
  saved: SuspendedFile,
  mark: ConsumedMark,
  outcome: string,
  savedTo: string | undefined,
): Promise<void> {
  try {
    await writeJsonFile(file, { ...saved, consumed: { ...mark, outcome, ...definedProps({ savedTo }) } });
  } catch {
    // The file is marked consumed already; the outcome is only a detail for the next reader.
  }
}

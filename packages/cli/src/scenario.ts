// Loading a scenario: a .ts/.js module (a TypeScript one loaded with tsx, an optional peer, so
// TypeScript runs without a build; a JavaScript one with Node's import()) or a .json file (see json-scenario.ts). Whatever the file holds is checked before the turn starts, so
// a mistake in a scenario is one line naming the file and the field, never a stack trace mid-turn.

import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Model, TurnLimitsInput } from '@turnkit/core';
import type { ToolDefinition } from '@turnkit/dispatch';
import type { OutputSchema } from '@turnkit/inline';
import { oneLine, UsageError } from './errors.js';
import { scenarioFromJson } from './json-scenario.js';
import { loadPeer } from './peer.js';
import { definedProps } from '@turnkit/core/internal';

export type { ModelFactory, ModelStart, ScenarioFile } from './scenario-file.js';
import type { ModelFactory, ScenarioFile } from './scenario-file.js';

/** A checked scenario file and where it came from. */
export interface LoadedScenarioFile extends ScenarioFile {
  /** Absolute path of the file. */
  readonly path: string;
  /** The name of the file's agent (of its `agents`) loaded as this scenario; absent for a scenario. */
  readonly agent?: string;
  /** sha256 (hex) of the file's bytes, as read before it was loaded. */
  readonly sha256: string;
}

/**
 * Which of a module's `agents` to run as the scenario (`turnkit run FILE --agent NAME --input TEXT`).
 * Without a name, a file whose only export is `agents`, of one agent, runs that one.
 */
export interface AgentChoice {
  readonly agent?: string;
  /**
   * The user's message: needed for an agent, which has none of its own; for a scenario, it replaces
   * the scenario's (a resume leaves it out: its turn has started).
   */
  readonly input?: string;
}

/** The scenario a suspended turn was saved with, which a resume must load again. */
export interface ExpectedScenarioFile {
  /** The suspended-turn file, for messages. */
  readonly savedIn: string;
  /** The scenario path the file records. */
  readonly path: string;
  readonly sha256: string;
}

const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);

/**
 * Loads and checks the scenario at `file`. Throws a UsageError (exit 2) for anything wrong with it.
 * With `expected` (a resume), the sha256 of the file's bytes must be the recorded one, checked
 * before the file is parsed or imported: a changed or different scenario is never run.
 */
export async function loadScenarioFile(
  file: string,
  expected?: ExpectedScenarioFile,
  choice?: AgentChoice,
): Promise<LoadedScenarioFile> {
  const path = resolve(file);
  await mustBeFile(path, file, 'scenario');
  const bytes = await readFile(path);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (expected !== undefined && sha256 !== expected.sha256) {
    const which =
      path === resolve(expected.path) ? `${file} has changed since` : `${file} is not the scenario (${expected.path}) with which`;
    throw new UsageError(
      `${which} the turn in ${expected.savedIn} was saved: its sha256 is ${sha256.slice(0, 12)}…, the file recorded ${expected.sha256.slice(0, 12)}…; nothing was loaded. Resume with the scenario as it was (--scenario PATH), or run the scenario again to start a new turn.`,
    );
  }
  const ext = extname(path).toLowerCase();
  let scenario: unknown;
  let agent: string | undefined;
  if (ext === '.json') {
    if (choice?.agent !== undefined)
      throw new UsageError(
        `${file} is a JSON scenario, one agent: run it without --agent (--agent picks one of a module's \`agents\`).`,
      );
    scenario = withInput(scenarioFromJson(parseJson(bytes.toString('utf8'), file), file), choice);
  } else if (MODULE_EXTENSIONS.has(ext)) {
    const format = await moduleFormat(path, ext);
    const module = await importModule(path, file, format);
    const exports = moduleExports(module, format);
    const picked = choice === undefined ? undefined : pickAgent(exports, file, choice);
    agent = picked?.name;
    scenario = picked === undefined ? withInput(pickExport(exports, file, exports !== module), choice) : picked.scenario;
  } else {
    throw new UsageError(`Cannot load scenario ${file}: use a .ts, .js or .json file (got '${ext || 'no extension'}').`);
  }
  return { ...check(scenario, path, file, agent), sha256, ...definedProps({ agent }) };
}

/** Throws a UsageError unless `path` is an existing regular file. */
export async function mustBeFile(path: string, shown: string, what: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new UsageError(`The ${what} file ${shown} does not exist; check the path.`);
  }
  if (!info.isFile()) throw new UsageError(`The ${what} path ${shown} is not a file.`);
}

/** Parses the JSON text of `shown`; a syntax error is a UsageError naming the file. */
function parseJson(text: string, shown: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${shown} is not valid JSON (${oneLine(error)}).`);
  }
}

/**
 * Imports a .ts/.js module the way scenario modules are imported (tsx for TypeScript, so it runs
 * without a build; Node's import() for JavaScript) and returns its exports (a CommonJS module's `module.exports`). `what` names the kind of
 * file in messages. Throws a UsageError for a missing file, another extension or a failed import.
 */
export async function importFile(file: string, what: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  await mustBeFile(path, file, what);
  const ext = extname(path).toLowerCase();
  if (!MODULE_EXTENSIONS.has(ext))
    throw new UsageError(`Cannot load ${what} file ${file}: use a .ts or .js file (got '${ext || 'no extension'}').`);
  const format = await moduleFormat(path, ext);
  return moduleExports(await importModule(path, file, format), format);
}

/** Errors of a CommonJS module that requires an ES-module-only package (such as every @turnkit one). */
const REQUIRED_ESM = new Set(['ERR_PACKAGE_PATH_NOT_EXPORTED', 'ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE']);

/** Extensions of TypeScript modules: these need tsx. */
const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

async function importModule(path: string, shown: string, format: ModuleFormat): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  const tsx = TYPESCRIPT.has(extname(path).toLowerCase())
    ? ((await loadPeer('tsx/esm/api', `Loading ${shown} (TypeScript)`)) as typeof import('tsx/esm/api'))
    : undefined;
  try {
    return (await (tsx === undefined ? import(url) : tsx.tsImport(url, import.meta.url))) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (format.commonJs && typeof code === 'string' && REQUIRED_ESM.has(code)) {
      throw new UsageError(
        `Could not load scenario ${shown}: it runs as CommonJS (${format.why}), but the @turnkit packages are ES modules only; ${format.fix}.`,
      );
    }
    throw new UsageError(`Could not load scenario ${shown}: ${oneLine(error)}`);
  }
}

interface ModuleFormat {
  readonly commonJs: boolean;
  /** Why, for the message. */
  readonly why: string;
  /** How to make it an ES module. */
  readonly fix: string;
}

/** Node's (and tsx's) rule: .mts/.mjs are ES modules, .cts/.cjs CommonJS, .ts/.js follow the nearest package.json's "type". */
async function moduleFormat(path: string, ext: string): Promise<ModuleFormat> {
  const rename = `rename it to ${ext.includes('t') ? '.mts' : '.mjs'}`;
  const fix = (packageJson: string | null): string =>
    `${rename} or add "type": "module" to ${packageJson ?? 'a package.json next to it'}`;
  if (ext === '.mts' || ext === '.mjs') return { commonJs: false, why: `a ${ext} file`, fix: '' };
  if (ext === '.cts' || ext === '.cjs') return { commonJs: true, why: `a ${ext} file`, fix: rename };
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    let text: string | null = null;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      // No package.json here: look further up.
    }
    if (text !== null) {
      let type: unknown;
      try {
        type = (JSON.parse(text) as { type?: unknown } | null)?.type;
      } catch {
        type = undefined;
      }
      return type === 'module'
        ? { commonJs: false, why: `"type": "module" in ${file}`, fix: '' }
        : { commonJs: true, why: `${file} has no "type": "module"`, fix: fix(file) };
    }
    if (dirname(dir) === dir) return { commonJs: true, why: 'no package.json above it says "type": "module"', fix: fix(null) };
  }
}

/**
 * A module's exports. A CommonJS module's namespace has its module.exports as `default`: the
 * exports are in there (`export default` compiled to CommonJS is `exports.default`;
 * `module.exports = {…}` is the scenario itself).
 */
function moduleExports(module: Record<string, unknown>, format: ModuleFormat): Record<string, unknown> {
  const inner = module.default;
  return format.commonJs && inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>) : module;
}

// What an agent of `agents` may have that a run in this process cannot apply, and what to do instead.
const NOT_IN_PROCESS: Readonly<Record<string, string>> = {
  approvalTimeoutMs:
    'nothing in this process keeps time for a parked call (the prompt and a suspended-turn file wait until the call is decided)',
};
/**
 * Which of a file's agents runs: `name` when the file has it, else its only agent; a UsageError
 * listing the names otherwise.
 */
export function chooseAgent(names: readonly string[], shown: string, name: string | undefined): string {
  const chosen = name ?? (names.length === 1 ? names[0] : undefined);
  if (chosen === undefined)
    throw new UsageError(
      names.length === 0
        ? `${shown} exports no agents (\`agents\` is empty): add one, as { name: { model, tools } }.`
        : `${shown} exports ${names.length} agents (${names.join(', ')}): pick one with --agent NAME.`,
    );
  if (!names.includes(chosen)) throw new UsageError(`${shown} has no agent '${chosen}': its agents are ${names.join(', ')}.`);
  return chosen;
}

/**
 * The agent of `exports.agents` that `choice` names, as a scenario with the choice's input; none
 * when the file has a scenario and no agent is named (the scenario runs, as without `agents`).
 */
function pickAgent(
  exports: Record<string, unknown>,
  shown: string,
  choice: AgentChoice,
): { name: string; scenario: unknown } | undefined {
  const agents = exports.agents;
  const hasScenario = exports.scenario !== undefined || exports.default !== undefined;
  if (agents === undefined) {
    if (choice.agent === undefined) return undefined;
    throw new UsageError(
      `${shown} exports no \`agents\`, so --agent ${choice.agent} names none: ${hasScenario ? 'it is a scenario, one agent; run it without --agent' : 'export `agents = { name: { model, tools } }`'}.`,
    );
  }
  if (choice.agent === undefined && hasScenario) return undefined;
  if (agents === null || typeof agents !== 'object' || Array.isArray(agents))
    throw new UsageError(`${shown}: \`agents\` must be an object { [name]: { model, tools, … } }.`);
  const name = chooseAgent(Object.keys(agents), shown, choice.agent);
  const agent = (agents as Record<string, unknown>)[name];
  if (agent === null || typeof agent !== 'object' || Array.isArray(agent))
    throw new UsageError(`${shown}: agent '${name}' must be an object with a \`model\` (and tools, system, limits, …).`);
  const refused = Object.keys(agent).filter((key) => Object.hasOwn(NOT_IN_PROCESS, key));
  if (refused.length > 0)
    throw new UsageError(
      `${shown}: agent '${name}' has ${refused.map((key) => `${key}, which turnkit run cannot apply in this process: ${NOT_IN_PROCESS[key]}`).join('; ')}. Store the turn, where a worker applies it: add --store (or run \`turnkit dev --agents ${shown}\`), or remove ${refused.join(', ')}.`,
    );
  if (choice.input === undefined)
    throw new UsageError(`Agent '${name}' of ${shown} has no input of its own: give the user's message with --input TEXT.`);
  return { name, scenario: { ...agent, input: choice.input } };
}

/** The scenario with the choice's input in place of its own (`turnkit run FILE --input TEXT`). */
function withInput(scenario: unknown, choice: AgentChoice | undefined): unknown {
  return choice?.input === undefined || scenario === null || typeof scenario !== 'object'
    ? scenario
    : { ...scenario, input: choice.input };
}

/** The scenario a module exports; `commonJs`: the exports are a CommonJS module's, which may be the scenario itself. */
function pickExport(exports: Record<string, unknown>, shown: string, commonJs: boolean): unknown {
  const picked = exports.scenario ?? exports.default ?? (commonJs && 'input' in exports ? exports : undefined);
  if (picked !== undefined) return picked;
  throw new UsageError(
    `Scenario ${shown} exports no scenario: add \`export default { input, tools, model }\` or \`export const scenario = { input, tools, … }\`.`,
  );
}

function check(value: unknown, path: string, shown: string, agent?: string): Omit<LoadedScenarioFile, 'sha256'> {
  const bad = (what: string): never => {
    throw new UsageError(`${agent === undefined ? 'Scenario' : `Agent '${agent}' of`} ${shown}: ${what}`);
  };
  if (value === null || typeof value !== 'object')
    return bad(
      'the export must be an object { input, tools, model?, limits?, system?, output?, permissions?, policy?, hooks?, budget?, check?, compact?, observe?, maxRunning?, mcpServers? }.',
    );
  const s = value as Record<string, unknown>;
  const known = new Set([
    'input',
    'tools',
    'model',
    'limits',
    'system',
    'output',
    'permissions',
    'policy',
    'hooks',
    'budget',
    'check',
    'compact',
    'observe',
    'maxRunning',
    'mcpServers',
    'name',
    'delegates',
    'handoffs',
    'models',
  ]);
  for (const key of Object.keys(s)) if (!known.has(key)) bad(`unknown field '${key}'; a scenario has ${[...known].join(', ')}.`);
  if (typeof s.input !== 'string') bad('`input` must be a string (the user message).');
  const tools = s.tools ?? [];
  if (!Array.isArray(tools)) bad('`tools` must be an array of tools made with defineTool.');
  for (const [index, tool] of (tools as unknown[]).entries()) {
    const t = tool as { name?: unknown; execute?: unknown; inputSchema?: unknown } | null;
    if (
      t === null ||
      typeof t !== 'object' ||
      typeof t.name !== 'string' ||
      typeof t.execute !== 'function' ||
      typeof t.inputSchema !== 'object'
    ) {
      bad(`tools[${index}] is not a tool; make each one with defineTool from @turnkit/dispatch.`);
    }
  }
  const model = s.model as Model | ModelFactory | undefined;
  if (model !== undefined && typeof model !== 'function' && !isModel(model))
    bad('`model` must be a Model (with generate) or a function ({ startAt }) returning one.');
  if (s.limits !== undefined && (s.limits === null || typeof s.limits !== 'object'))
    bad('`limits` must be an object such as { maxIterations: 5 }.');
  if (s.system !== undefined && typeof s.system !== 'string') bad('`system` must be a string.');
  if (s.output !== undefined && typeof (s.output as OutputSchema | null)?.safeParse !== 'function')
    bad('`output` must be a zod schema.');
  checkDispatchOptions(s, bad);
  if (s.budget !== undefined && (s.budget === null || typeof s.budget !== 'object' || Array.isArray(s.budget)))
    bad('`budget` must be an object such as { maxCalls: 10, perTool: { shell: 2 } }.');
  for (const key of ['check', 'compact', 'observe'] as const)
    if (s[key] !== undefined && typeof s[key] !== 'function') bad(`\`${key}\` must be a function.`);
  if (s.maxRunning !== undefined && !(Number.isSafeInteger(s.maxRunning) && (s.maxRunning as number) >= 1))
    bad('`maxRunning` must be a whole number of turns, at least 1.');
  checkAgents(s, bad);
  if (s.mcpServers !== undefined && (s.mcpServers === null || typeof s.mcpServers !== 'object' || Array.isArray(s.mcpServers)))
    bad('`mcpServers` must be an object of MCP servers by name, like { files: { command: "node", args: ["server.js"] } }.');
  return {
    path,
    input: s.input as string,
    tools: tools as ToolDefinition<unknown>[],
    ...definedProps({ model }),
    ...(s.limits === undefined ? {} : { limits: s.limits as TurnLimitsInput }),
    ...(s.system === undefined ? {} : { system: s.system as string }),
    ...(s.output === undefined ? {} : { output: s.output as OutputSchema }),
    ...(s.permissions === undefined ? {} : { permissions: s.permissions as ScenarioFile['permissions'] & object }),
    ...(s.policy === undefined ? {} : { policy: s.policy as ScenarioFile['policy'] & object }),
    ...(s.hooks === undefined ? {} : { hooks: s.hooks as ScenarioFile['hooks'] & object }),
    ...(s.budget === undefined ? {} : { budget: s.budget as ScenarioFile['budget'] & object }),
    ...(s.check === undefined ? {} : { check: s.check as ScenarioFile['check'] & object }),
    ...(s.compact === undefined ? {} : { compact: s.compact as ScenarioFile['compact'] & object }),
    ...(s.observe === undefined ? {} : { observe: s.observe as ScenarioFile['observe'] & object }),
    ...(s.maxRunning === undefined ? {} : { maxRunning: s.maxRunning as number }),
    ...(s.mcpServers === undefined ? {} : { mcpServers: s.mcpServers as ScenarioFile['mcpServers'] & object }),
    ...(s.name === undefined ? {} : { name: s.name as string }),
    ...(s.delegates === undefined ? {} : { delegates: s.delegates as ScenarioFile['delegates'] & object }),
    ...(s.handoffs === undefined ? {} : { handoffs: s.handoffs as ScenarioFile['handoffs'] & object }),
    ...(s.models === undefined ? {} : { models: s.models as readonly string[] }),
  };
}

/**
 * Checks a scenario's agents (docs/agents.md): `name`, and `delegates` and `handoffs` as lists of
 * agents each with a name, a description and a model of its own; `models` a list of ids. What
 * lies deeper in an agent (its tools, its own delegates) runTurn checks, naming the agent.
 */
function checkAgents(s: Record<string, unknown>, bad: (what: string) => never): void {
  if (s.name !== undefined && (typeof s.name !== 'string' || s.name === ''))
    bad("`name` must be a non-empty string (the agent's name).");
  for (const key of ['delegates', 'handoffs'] as const) {
    const list = s[key];
    if (list === undefined) continue;
    if (!Array.isArray(list))
      bad(`\`${key}\` must be an array of agents { name, description, model, system?, tools?, limits? }.`);
    for (const [index, agent] of (list as unknown[]).entries()) {
      const a = agent as { name?: unknown; description?: unknown; model?: unknown } | null;
      if (a === null || typeof a !== 'object' || typeof a.name !== 'string' || typeof a.description !== 'string')
        bad(`${key}[${index}] must be an agent with a \`name\` and a \`description\` (the model reads it to choose).`);
      if (!isModel(a?.model) && typeof a?.model !== 'function')
        bad(
          `${key}[${index}] (agent '${String(a?.name)}') needs a \`model\` of its own (with generate, or a function ({ startAt }) returning one), such as a scripted one.`,
        );
    }
  }
  if (s.models !== undefined && !(Array.isArray(s.models) && s.models.every((m) => typeof m === 'string' && m !== '')))
    bad('`models` must be an array of model ids (non-empty strings).');
  if ((s.delegates !== undefined || s.handoffs !== undefined || s.models !== undefined) && s.name === undefined)
    bad('a scenario with `delegates`, `handoffs` or `models` needs a `name` (the first agent of the agent path).');
}

const stringList = (value: unknown): boolean => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** A permission set: `{ deny?, allow?, ask? }`, each a list of tool patterns (with `name` in a layered list). */
function isPermissionSet(value: unknown, named: boolean): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const set = value as Record<string, unknown>;
  if (named && typeof set.name !== 'string') return false;
  return Object.entries(set).every(([key, v]) =>
    key === 'name' ? named : (key === 'deny' || key === 'allow' || key === 'ask') && stringList(v),
  );
}

/**
 * Checks what a scenario gives the dispatcher (`permissions`, `policy`, `hooks`), the shapes
 * `createDispatcher` takes, so the same values work for the library, `turnkit run` and a worker.
 */
function checkDispatchOptions(s: Record<string, unknown>, bad: (what: string) => never): void {
  const p = s.permissions;
  if (p !== undefined && !(Array.isArray(p) ? p.every((set) => isPermissionSet(set, true)) : isPermissionSet(p, false)))
    bad(
      "`permissions` must be { deny?, allow?, ask? } (lists of tool patterns such as 'delete_file' or 'shell:cmd=ls *'), or a list of such sets each with a `name`.",
    );
  if (s.policy !== undefined && typeof s.policy !== 'function') bad('`policy` must be a function (call) => verdict.');
  const hooks = s.hooks as { before?: unknown; after?: unknown } | null | undefined;
  const isHook = (h: unknown): boolean =>
    h !== null &&
    typeof h === 'object' &&
    typeof (h as { name?: unknown }).name === 'string' &&
    typeof (h as { run?: unknown }).run === 'function';
  const hookList = (list: unknown): boolean => list === undefined || (Array.isArray(list) && list.every(isHook));
  if (
    hooks !== undefined &&
    (hooks === null ||
      typeof hooks !== 'object' ||
      Object.keys(hooks).some((k) => k !== 'before' && k !== 'after') ||
      !hookList(hooks.before) ||
      !hookList(hooks.after))
  )
    bad('`hooks` must be { before?: [hooks], after?: [hooks] }, each hook { name, run(call) }.');
}

function isModel(value: unknown): value is Model {
  return value !== null && typeof value === 'object' && typeof (value as Model).generate === 'function';
}

/**
 * What to give instead of a ready-made model where a turn resumes (`turnkit resume`, and a worker
 * continuing a stored turn): the same sentence everywhere.
 */
export const SCRIPT_FIX =
  'Export a function of the calls already made instead: model: ({ startAt }) => scriptedModel(steps, { startAt }).';

/** Where a resumed turn's model continues from. */
export interface ModelResume {
  /** The suspended-turn file (blamed when its count is one the model cannot continue from). */
  readonly file: string;
  /** The model calls the suspended run's model answered (the file's `modelCalls`). */
  readonly modelCalls: number;
}

/**
 * The scenario's model for one run: its function is called with `{ startAt }` (0, or the saved
 * count on a resume). Throws a UsageError naming the scenario file for a function that throws or
 * returns something that is not a Model, naming the resume file when the model cannot continue
 * from the count it records, and saying to export a function when a ready-made model would have
 * to continue a suspended turn.
 */
export function makeScenarioModel(scenario: LoadedScenarioFile, shown: string, resume?: ModelResume): Model | undefined {
  return scenario.model === undefined ? undefined : makeModel(scenario.model, `scenario ${shown}`, resume);
}

/**
 * A model of a scenario (its own, or one of its agents', `whose` names it: "scenario FILE",
 * "agent 'editor' of FILE") for one run, as `makeScenarioModel` makes it. A ready-made model
 * continues a resumed turn only where it answered nothing yet (`modelCalls` 0, an agent that has
 * not acted): it starts at its first reply either way.
 */
export function makeModel(model: Model | ModelFactory, whose: string, resume?: ModelResume): Model {
  const Whose = `${whose.charAt(0).toUpperCase()}${whose.slice(1)}`;
  if (typeof model !== 'function') {
    if (resume === undefined || (resume.modelCalls === 0 && !whose.startsWith('scenario '))) return model;
    throw new UsageError(
      `${Whose} exports a ready-made model, which cannot continue the suspended turn in ${resume.file} (a scripted model would start its script again). ${SCRIPT_FIX}`,
    );
  }
  const startAt = resume?.modelCalls ?? 0;
  let made: unknown;
  try {
    made = model({ startAt });
  } catch (error) {
    if (resume === undefined) throw new UsageError(`${Whose}: its model function threw: ${oneLine(error)}`);
    throw new UsageError(
      `${resume.file}: the model of ${whose} cannot continue from modelCalls ${startAt}, the count the file records (${oneLine(error)}); the file was changed since it was saved, or was never one that \`turnkit run\` wrote. Nothing was run.`,
    );
  }
  if (!isModel(made))
    throw new UsageError(
      `${Whose}: its model function must return a Model (with generate), got ${made === null ? 'null' : typeof made}.`,
    );
  return made;
}

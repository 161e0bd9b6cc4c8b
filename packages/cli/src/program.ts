// The command line: commander parses, each command lives in one function. Every mistake in how
// turnkit is called (unknown command or flag, bad number, missing or bad file, missing API key)
// is one line on stderr and exit code 2; see EXIT in turn.ts for the others.

import { readFileSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApprovalDecision } from '@turnkit/core';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { checkCommand } from './commands/check.js';
import { checkStoreCommand } from './commands/check-store.js';
import { GRAPH_FORMATS, graphCommand, type GraphFormat } from './commands/graph.js';
import { replayCommand } from './commands/replay.js';
import { addServeCommand } from './commands/serve.js';
import { registerCancel } from './commands/cancel.js';
import { registerDecide } from './commands/decide.js';
import { registerLs } from './commands/ls.js';
import { runStoredCommand } from './commands/run-stored.js';
import { registerShow } from './commands/show.js';
import { STORE_HELP } from './commands/store-common.js';
import { registerWorker } from './commands/worker.js';
import { oneLine, UsageError } from './errors.js';
import { PROVIDERS, type ProviderName, type ProviderOptions } from './provider.js';
import { loadScenarioFile } from './scenario.js';
import { safeText } from './safe-text.js';
import { readSuspended } from './suspended.js';
import { EXIT, runTurnCommand, undecidedIds } from './turn.js';
import { definedProps } from '@turnkit/core/internal';

interface RunFlags {
  readonly stream?: boolean;
  readonly json?: boolean;
  readonly trace?: string;
  readonly save?: string;
  readonly provider?: ProviderName;
  readonly model?: string;
  readonly baseUrl?: string;
  readonly store?: string | true;
  readonly id?: string;
}

interface ResumeFlags extends Omit<RunFlags, 'provider' | 'model' | 'baseUrl' | 'store' | 'id'> {
  readonly approve: string[];
  readonly reject: string[];
  readonly scenario?: string;
}

/** Runs the CLI with `argv` (as process.argv: node, script, args…); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram((code) => {
    exitCode = code;
  });
  if (argv.length <= 2) {
    process.stderr.write(program.helpInformation());
    return EXIT.usage;
  }
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end here too, with exit code 0; parse errors were printed by outputError.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // Messages quote ids, paths and values from files, models and the command line: printed safely.
    if (error instanceof UsageError) {
      process.stderr.write(`turnkit: ${safeText(oneLine(error))}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`turnkit: unexpected error: ${safeText(oneLine(error))}\n`);
    return EXIT.failed;
  }
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function configure(command: Command): Command {
  return command
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      // One line: commander puts a suggestion on a second line.
      outputError: (text, write) => write(`turnkit: ${safeText(oneLine(text.replace(/^error: /, '')))}\n`),
    });
}

/**
 * The example scenarios the package ships, as a path from the working directory: the help's
 * examples can be typed as shown both in the repository (packages/cli/examples) and in a project
 * that installed the CLI (node_modules/@turnkit/cli/examples).
 */
function examplesDir(): string {
  return relative(process.cwd(), fileURLToPath(new URL('../examples', import.meta.url))) || '.';
}

function buildProgram(setExit: (code: number) => void): Command {
  const examples = examplesDir();
  const program = configure(new Command('turnkit'))
    .description('Run, resume, replay and check turnkit agent turns; store them and run them with workers.')
    .version(version(), '-v, --version')
    .addHelpText(
      'after',
      `\nExample:\n  $ turnkit run ${examples}/trip-planner.ts\n\nExit codes: 0 ok, 1 failed (or a replay/check difference), 2 usage error, 3 suspended for approval.`,
    );

  addRunCommand(program, examples, setExit);
  addResumeCommand(program, examples, setExit);
  addInspectCommands(program, examples, setExit);
  addServeCommand(program, configure, setExit);
  const kit = { configure, setExit };
  registerLs(program, kit);
  registerShow(program, kit);
  registerDecide(program, kit);
  registerCancel(program, kit);
  registerWorker(program, kit);

  return program;
}

/** `turnkit run`: a scenario in-process, or stored with --store. */
function addRunCommand(program: Command, examples: string, setExit: (code: number) => void): void {
  const providerOption = new Option('--provider <name>', 'run against a real model through the AI SDK').choices(PROVIDERS);
  configure(program.command('run'))
    .description('Run a scenario (.ts, .js or .json) and print its timeline.')
    .argument('<scenario>', 'the scenario file')
    .option('--stream', 'use the streaming interpreter (text appears as it is generated)')
    .option('--json', 'print the trace as NDJSON instead of the timeline')
    .option('--trace <file>', 'save the trace (for `turnkit replay`)')
    .option('--save <file>', 'where to write a suspended turn (default ./turnkit-suspended-<turnId>.json)')
    .addOption(providerOption)
    .option('--model <name>', 'the model id for --provider, e.g. gpt-4.1-mini')
    .option('--base-url <url>', 'the API base URL (required for openai-compatible)', parseUrl)
    .option('--store [url]', `store the turn (see \`turnkit ls\`): ${STORE_HELP}`)
    .option('--id <turn>', 'with --store: the id of the stored turn (default turn_<uuid>)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        `  $ turnkit run ${examples}/trip-planner.ts`,
        `  $ turnkit run ${examples}/delete-files.ts --save turn.json`,
        `  $ turnkit run ${examples}/delete-files.ts --store`,
        `  $ turnkit run ${examples}/trip-planner.ts --json > trace.ndjson`,
        `  $ OPENAI_API_KEY=sk-... turnkit run ${examples}/trip-planner.ts --provider openai --model gpt-4.1-mini`,
        '  $ turnkit run scenario.json --provider openai-compatible --model qwen3:8b --base-url http://localhost:11434/v1',
        '',
        'Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENAI_COMPATIBLE_API_KEY (optional).',
      ].join('\n'),
    )
    .action(async (file: string, flags: RunFlags) => {
      const provider = providerFlags(flags);
      const scenario = await loadScenarioFile(file);
      if (flags.id !== undefined && flags.store === undefined)
        throw new UsageError('--id names a stored turn: use it with --store.');
      if (flags.store !== undefined) {
        const unsupported = (['stream', 'json', 'trace', 'save'] as const)
          .filter((f) => flags[f] !== undefined)
          .map((f) => `--${f}`);
        const stored = { scenarioFile: file, scenario, provider, store: flags.store, unsupported };
        setExit(await runStoredCommand({ ...stored, ...definedProps({ id: flags.id }) }));
        return;
      }
      setExit(await runTurnCommand({ scenarioFile: file, scenario, provider, ...outputFlags(flags) }));
    });
}

/** `turnkit resume`: a suspended-turn file, checked whole before anything it names is loaded. */
function addResumeCommand(program: Command, examples: string, setExit: (code: number) => void): void {
  configure(program.command('resume'))
    .description('Continue a suspended turn with a decision for each pending call.')
    .argument('<file>', 'the suspended-turn file `turnkit run` wrote')
    .option('--approve <id>', 'approve the pending call with this id (repeatable)', collect, [])
    .option('--reject <id[=reason]>', 'reject the pending call, optionally telling the model why (repeatable)', collect, [])
    .option('--stream', 'use the streaming interpreter')
    .option('--json', 'print the trace as NDJSON instead of the timeline')
    .option('--trace <file>', 'save the trace of the resumed part')
    .option('--save <file>', 'where to write the turn if it suspends again (default: FILE itself)')
    .option(
      '--scenario <file>',
      'load the tools from this scenario instead of the path FILE records (its sha256 must still match)',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ turnkit resume turnkit-suspended-turn-1a2b3c4d.json --approve call_2',
        "  $ turnkit resume turnkit-suspended-turn-1a2b3c4d.json --approve call_2 --reject call_3='keep the cache'",
        `  $ turnkit resume turn.json --approve call_2 --scenario ${examples}/delete-files.ts`,
      ].join('\n'),
    )
    .action(async (file: string, flags: ResumeFlags) => {
      // The whole file is checked before anything it names is loaded: a resume file is data.
      const read = await readSuspended(file);
      const { saved } = read;
      const decisions = decisionsFrom(flags, undecidedIds(saved.pending, saved.state.batch?.decisions));
      const scenarioPath = flags.scenario ?? saved.scenario;
      const scenario = await loadScenarioFile(scenarioPath, {
        savedIn: file,
        path: saved.scenario,
        sha256: saved.scenarioSha256,
      });
      const stream = flags.stream === true || saved.options.stream;
      setExit(
        await runTurnCommand({
          scenarioFile: flags.scenario ?? shortPath(saved.scenario),
          scenario,
          provider: saved.options.provider,
          ...outputFlags({ ...flags, stream }),
          resume: { file, read, decisions },
        }),
      );
    });
}

/** `turnkit replay`, `graph` and `check`: the turn machine itself. */
function addInspectCommands(program: Command, examples: string, setExit: (code: number) => void): void {
  configure(program.command('replay'))
    .description('Replay a saved trace through step and say whether it is identical.')
    .argument('<file>', 'a trace from --trace (or the NDJSON of --json)')
    .addHelpText(
      'after',
      `\nExample:\n  $ turnkit run ${examples}/trip-planner.ts --trace trace.json\n  $ turnkit replay trace.json`,
    )
    .action(async (file: string) => setExit(await replayCommand(file)));

  configure(program.command('graph'))
    .description('Print the turn machine as a diagram.')
    .addOption(new Option('--format <format>', 'diagram format').choices(GRAPH_FORMATS).default('mermaid'))
    .addHelpText('after', '\nExamples:\n  $ turnkit graph > turn.mmd\n  $ turnkit graph --format dot | dot -Tsvg > turn.svg')
    .action(async (flags: { format: GraphFormat }) => setExit(await graphCommand(flags.format)));

  configure(program.command('check'))
    .description('Explore every reachable turn state and check the invariants on each transition.')
    .option('--max-iterations <n>', 'limits.maxIterations of the explored turn', wholeNumber(1), 2)
    .option('--loop-threshold <n>', 'limits.loopThreshold (0 disables loop detection)', wholeNumber(0), 2)
    .option('--repairs <n>', 'limits.maxOutputRepairs', wholeNumber(0), 1)
    .option('--depth <n>', 'stop expanding after this many events from the start', wholeNumber(1), 60)
    .option('--store', 'check the durable protocol instead (claims, leases, fencing, the journal, the inbox, recovery)')
    .option('--write <file>', 'with --store: replace the figures section of this page (docs/model-checking.md)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit check\n  $ turnkit check --max-iterations 3 --loop-threshold 3 --depth 80\n  $ turnkit check --store\n  $ turnkit check --store --write docs/model-checking.md',
    )
    .action(async (flags: CheckFlags) => setExit(await checkAction(flags)));
}

/** The path relative to the working directory when it lies below it (shorter timeline headers). */
function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function wholeNumber(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min)
      throw new InvalidArgumentError(`Expected a whole number ≥ ${min}.`);
    return n;
  };
}

function parseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('Expected a URL such as http://localhost:11434/v1.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('Expected an http:// or https:// URL.');
  return value;
}

function providerFlags(flags: RunFlags): ProviderOptions | null {
  if (flags.provider === undefined) {
    if (flags.model !== undefined)
      throw new UsageError(
        "--model needs --provider (openai, anthropic or openai-compatible); without it the scenario's own model runs.",
      );
    if (flags.baseUrl !== undefined)
      throw new UsageError('--base-url needs --provider (openai, anthropic or openai-compatible).');
    return null;
  }
  if (flags.model === undefined || flags.model.trim() === '')
    throw new UsageError(`--provider ${flags.provider} needs --model NAME, e.g. --model ${exampleModel(flags.provider)}.`);
  return { provider: flags.provider, model: flags.model, ...definedProps({ baseUrl: flags.baseUrl }) };
}

function exampleModel(provider: ProviderName): string {
  return provider === 'openai' ? 'gpt-4.1-mini' : provider === 'anthropic' ? 'claude-sonnet-4-5' : 'qwen3:8b';
}

function outputFlags(flags: Pick<RunFlags, 'stream' | 'json' | 'trace' | 'save'>): {
  stream: boolean;
  json: boolean;
  trace?: string;
  save?: string;
} {
  return {
    stream: flags.stream === true,
    json: flags.json === true,
    ...definedProps({ trace: flags.trace }),
    ...definedProps({ save: flags.save }),
  };
}

/** The decisions of `--approve ID` / `--reject ID[=reason]`, checked against the pending call ids. */
function decisionsFrom(flags: ResumeFlags, pending: readonly string[]): Record<string, ApprovalDecision> {
  const list = pending.join(', ');
  if (flags.approve.length === 0 && flags.reject.length === 0) {
    throw new UsageError(`Give a decision for the pending calls (${list}): --approve ID or --reject ID[=reason].`);
  }
  // A Map, not an object literal: every id core accepts (`__proto__`, `constructor`, …) is a plain key.
  const decisions = new Map<string, ApprovalDecision>();
  const add = (id: string, decision: ApprovalDecision): void => {
    if (!pending.includes(id)) throw new UsageError(`'${id}' is not a pending call of this turn; the pending calls are ${list}.`);
    if (decisions.has(id))
      throw new UsageError(`'${id}' was given more than one decision; give each call one --approve or --reject.`);
    decisions.set(id, decision);
  };
  for (const id of flags.approve) add(id, { type: 'approve' });
  for (const item of flags.reject) {
    const at = item.indexOf('=');
    const id = at === -1 ? item : item.slice(0, at);
    const reason = at === -1 ? '' : item.slice(at + 1).trim();
    add(id, reason === '' ? { type: 'reject' } : { type: 'reject', reason });
  }
  // Object.fromEntries defines own properties (an assignment of `__proto__` would set the prototype).
  return Object.fromEntries(decisions);
}

interface CheckFlags {
  readonly maxIterations: number;
  readonly loopThreshold: number;
  readonly repairs: number;
  readonly depth: number;
  readonly store?: boolean;
  readonly write?: string;
}

/** `turnkit check`: the turn machine, or with --store the durable protocol. */
function checkAction(flags: CheckFlags): Promise<number> {
  if (flags.store === true) return checkStoreCommand(flags.write === undefined ? {} : { write: flags.write });
  if (flags.write !== undefined) throw new UsageError("--write goes with --store: it writes the durable protocol's figures.");
  return checkCommand(flags);
}

// The command line: commander parses, each command lives in one function. Every mistake in how
// turnkit is called (unknown command or flag, bad number, missing or bad file, missing API key)
// is one line on stderr and exit code 2; see EXIT in turn.ts for the others.

import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { GRAPH_FORMATS, graphCommand, type GraphFormat } from './commands/graph.js';
import { replayCommand } from './commands/replay.js';
import { addServeCommand } from './commands/serve.js';
import { registerCancel } from './commands/cancel.js';
import { registerDecide } from './commands/decide.js';
import { registerLs } from './commands/ls.js';
import { registerShow } from './commands/show.js';
import { registerWorker } from './commands/worker.js';
import { registerDev } from './commands/dev.js';
import { registerWatch } from './commands/watch.js';
import { addResumeCommand } from './commands/resume.js';
import { addRunCommand } from './commands/run.js';
import { oneLine, UsageError, wholeNumber } from './errors.js';
import { safeText } from './safe-text.js';
import { EXIT } from './turn.js';

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

  addRunCommand(program, { configure, setExit }, examples);
  addResumeCommand(program, { configure, setExit }, examples);
  addInspectCommands(program, examples, setExit);
  addServeCommand(program, configure, setExit);
  const kit = { configure, setExit };
  registerLs(program, kit);
  registerShow(program, kit);
  registerDecide(program, kit);
  registerCancel(program, kit);
  registerWorker(program, kit);
  registerWatch(program, kit);
  registerDev(program, kit);

  return program;
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
    .option(
      '--purity-sample <n>',
      'run the purity re-runs of invariants 2 and 3 (step on frozen copies and on a JSON round trip) on one edge in n, and the parse check on one distinct state in n',
      wholeNumber(1),
      1,
    )
    .option(
      '--workers <n>',
      "explore on n worker threads (each owns the states whose fingerprint falls to it; the result is the one-thread run's)",
      wholeNumber(1),
      1,
    )
    .option('--store', 'check the durable protocol instead (claims, leases, fencing, the journal, the inbox, recovery)')
    .option('--write <file>', 'with --store: replace the figures section of this page (docs/model-checking.md)')
    .option(
      '--agent <file>',
      'check an agent instead: its turns through its own rules, limits and budgets (a file exporting `agents`, `agent` or a scenario, and optionally `properties`)',
    )
    .option('--name <agent>', "with --agent: which of the file's `agents`")
    .option('--out <file>', 'with --agent: write the first violation as a vitest file that fails until the agent is fixed')
    .option('--calls-per-reply <n>', 'with --agent: model replies make every set of up to n distinct calls', wholeNumber(1), 2)
    .option('--max-states <n>', 'with --agent: stop once n states were reached (default 2,000,000)', wholeNumber(1))
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnkit check\n  $ turnkit check --max-iterations 3 --loop-threshold 3 --depth 80 --workers 2\n  $ turnkit check --store\n  $ turnkit check --store --write docs/model-checking.md\n  $ turnkit check --agent agents.ts --out agent.counterexample.test.ts',
    )
    .action(async (flags: CheckFlags) => setExit(await checkAction(flags)));
}

interface CheckFlags {
  readonly maxIterations: number;
  readonly loopThreshold: number;
  readonly repairs: number;
  readonly depth: number;
  readonly puritySample: number;
  readonly workers: number;
  readonly store?: boolean;
  readonly write?: string;
  readonly agent?: string;
  readonly name?: string;
  readonly out?: string;
  readonly callsPerReply: number;
  readonly maxStates?: number;
}

/**
 * `turnkit check`: the turn machine, with --agent an agent, or with --store the durable protocol.
 * The model checker is loaded here, when asked for: the other commands start without it.
 */
async function checkAction(flags: CheckFlags): Promise<number> {
  if (flags.workers > 1 && (flags.agent !== undefined || flags.store === true))
    throw new UsageError('--workers explores the turn machine on worker threads; --agent and --store run on one thread.');
  if (flags.agent !== undefined) {
    if (flags.store === true || flags.write !== undefined)
      throw new UsageError('--agent checks an agent; --store and --write check the durable protocol: pick one.');
    const { checkAgentCommand } = await import('./commands/check-agent.js');
    return checkAgentCommand({
      agent: flags.agent,
      depth: flags.depth,
      callsPerReply: flags.callsPerReply,
      ...(flags.name === undefined ? {} : { name: flags.name }),
      ...(flags.out === undefined ? {} : { out: flags.out }),
      ...(flags.maxStates === undefined ? {} : { maxStates: flags.maxStates }),
    });
  }
  for (const [flag, value] of [
    ['--name', flags.name],
    ['--out', flags.out],
    ['--max-states', flags.maxStates],
  ] as const)
    if (value !== undefined) throw new UsageError(`${flag} goes with --agent: it is an option of an agent's check.`);
  if (flags.store === true) {
    const { checkStoreCommand } = await import('./commands/check-store.js');
    return checkStoreCommand(flags.write === undefined ? {} : { write: flags.write });
  }
  if (flags.write !== undefined) throw new UsageError("--write goes with --store: it writes the durable protocol's figures.");
  const { checkCommand } = await import('./commands/check.js');
  return checkCommand(flags);
}

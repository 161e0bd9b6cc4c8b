// `turnkit run`: a scenario in-process (or stored with --store), and the output flags it shares
// with `turnkit resume`.

import { definedProps } from '@turnkit/core/internal';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../errors.js';
import { PROVIDERS, type ProviderName, type ProviderOptions } from '../provider.js';
import { chooseAgent, loadScenarioFile } from '../scenario.js';
import { loadAgents } from './agents-file.js';
import { runTurnCommand } from '../turn.js';
import { runStoredCommand, type StoredAgent } from './run-stored.js';
import { STORE_HELP, type CommandKit } from './store-common.js';

export interface RunFlags {
  readonly stream?: boolean;
  readonly json?: boolean;
  readonly trace?: string;
  readonly save?: string;
  readonly provider?: ProviderName;
  readonly model?: string;
  readonly baseUrl?: string;
  readonly store?: string | true;
  readonly id?: string;
  readonly thread?: string;
  readonly agent?: string;
  readonly input?: string;
}

/** `turnkit run`: a scenario in-process, or stored with --store. */
export function addRunCommand(program: Command, { configure, setExit }: CommandKit, examples: string): void {
  const providerOption = new Option('--provider <name>', 'run against a real model through the AI SDK').choices(PROVIDERS);
  configure(program.command('run'))
    .description('Run a scenario (.ts, .js or .json), or one agent of an agents file, and print its timeline.')
    .argument('<scenario>', 'the scenario file, or a module that exports `agents`')
    .option('--agent <name>', "run this agent of the file's `agents` (needed when it has several)")
    .option('--input <text>', "the user's message (an agent of `agents` has none; a scenario's own is replaced)")
    .option('--stream', 'use the streaming interpreter (text appears as it is generated)')
    .option('--json', 'print the trace as NDJSON instead of the timeline')
    .option('--trace <file>', 'save the trace (for `turnkit replay`)')
    .option('--save <file>', 'where to write a suspended turn (default ./turnkit-suspended-<turnId>.json)')
    .addOption(providerOption)
    .option('--model <name>', 'the model id for --provider, e.g. gpt-4.1-mini')
    .option('--base-url <url>', 'the API base URL (required for openai-compatible)', parseUrl)
    .option('--store [url]', `store the turn (see \`turnkit ls\`): ${STORE_HELP}`)
    .option('--id <turn>', 'with --store: the id of the stored turn (default turn_<uuid>)')
    .option(
      '--thread <id>',
      'with --store: the thread the turn continues (after its earlier turns; a new thread when the id is new)',
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        `  $ turnkit run ${examples}/trip-planner.ts`,
        `  $ turnkit run ${examples}/delete-files.ts --save turn.json`,
        `  $ turnkit run ${examples}/delete-files.ts --store`,
        `  $ turnkit run ${examples}/delete-files.ts --store --thread tidy-up`,
        `  $ turnkit run ${examples}/trip-planner.ts --json > trace.ndjson`,
        `  $ turnkit run ${examples}/desk-agents.ts --agent billing --input 'Refund invoice 7.'`,
        `  $ OPENAI_API_KEY=sk-... turnkit run ${examples}/trip-planner.ts --provider openai --model gpt-4.1-mini`,
        '  $ turnkit run scenario.json --provider openai-compatible --model qwen3:8b --base-url http://localhost:11434/v1',
        '',
        'Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENAI_COMPATIBLE_API_KEY (optional).',
      ].join('\n'),
    )
    .action(async (file: string, flags: RunFlags) => {
      const provider = providerFlags(flags);
      const choice = definedProps({ agent: flags.agent, input: flags.input });
      if (flags.id !== undefined && flags.store === undefined)
        throw new UsageError('--id names a stored turn: use it with --store.');
      if (flags.thread !== undefined && flags.store === undefined)
        throw new UsageError('--thread names a thread of stored turns: use it with --store.');
      if (flags.store !== undefined) {
        const unsupported = (['stream', 'json', 'trace', 'save'] as const)
          .filter((f) => flags[f] !== undefined)
          .map((f) => `--${f}`);
        // A named agent runs whole, by a worker; otherwise the scenario (or a file's only agent) does.
        const what =
          flags.agent === undefined
            ? { scenario: await loadScenarioFile(file, undefined, choice) }
            : { agent: await storedAgent(file, flags.agent, flags.input) };
        const stored = { scenarioFile: file, ...what, provider, store: flags.store, unsupported };
        setExit(await runStoredCommand({ ...stored, ...definedProps({ id: flags.id, thread: flags.thread }) }));
        return;
      }
      const scenario = await loadScenarioFile(file, undefined, choice);
      setExit(await runTurnCommand({ scenarioFile: file, scenario, provider, ...outputFlags(flags) }));
    });
}

/** The agent `--agent` names in `file`, whole (a worker applies all of its definition), and its input. */
async function storedAgent(file: string, name: string, input: string | undefined): Promise<StoredAgent> {
  const agents = await loadAgents(file);
  const chosen = chooseAgent(Object.keys(agents), file, name);
  const definition = agents[chosen];
  if (definition === undefined) throw new UsageError(`${file} has no agent '${chosen}'.`);
  if (input === undefined)
    throw new UsageError(`Agent '${chosen}' of ${file} has no input of its own: give the user's message with --input TEXT.`);
  return { name: chosen, definition, input };
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

export function outputFlags(flags: Pick<RunFlags, 'stream' | 'json' | 'trace' | 'save'>): {
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

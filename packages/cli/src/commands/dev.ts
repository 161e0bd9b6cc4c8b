// `turnkit dev --agents <file>`: one process for trying turns on this machine with no Postgres: the
// embedded store (PGlite in a directory, `.turnkit` by default), a worker for the agents of the
// file, and the HTTP API and the web console (@turnkit/server's `serve`). It prints the console's
// URL and the token, and writes `turnkit-dev.json` in the store's directory (address, token, pid,
// agents; mode 0600; removed when it stops), by which the store commands of another terminal
// (`ls`, `show`, `approve`, `reject`, `cancel`, `watch`, `run --store`) go through it. Stops on
// Ctrl+C or SIGTERM: it stops listening, lets its worker finish or hand back what it holds, and
// closes the store.

import { type AgentDefinition, createWorker } from '@turnkit/store';
import type { Command } from 'commander';
import { oneLine, UsageError } from '../errors.js';
import { devFilePath, findDevLink, isDirectoryStore, writeDevLink } from '../dev-link.js';
import { safeText } from '../safe-text.js';
import { EXIT } from '../turn.js';
import { loadAgents } from './agents-file.js';
import { port, loadServer } from './serve.js';
import { stopSignal, workerReports } from './worker.js';
import { type CommandKit, DEFAULT_STORE, openCliStore, sayIfNew } from './store-common.js';

interface DevFlags {
  readonly agents: readonly string[];
  readonly store: string;
  readonly host: string;
  readonly port: number;
  readonly quiet?: boolean;
}

const TOKEN_ENV = 'TURNKIT_SERVER_TOKEN';

async function devCommand(flags: DevFlags): Promise<number> {
  if (!isDirectoryStore(flags.store))
    throw new UsageError(
      `turnkit dev keeps its turns in a PGlite directory (default ${DEFAULT_STORE}), not ${flags.store}: for Postgres, run \`turnkit serve\` and \`turnkit worker\`, which share it.`,
    );
  const running = findDevLink(flags.store);
  if (running !== null)
    throw new UsageError(
      `turnkit dev (process ${running.pid}) already holds the store ${flags.store}, at ${running.url}/console; stop it first or pass another --store.`,
    );
  const { generateToken, serve } = await loadServer('turnkit dev');
  const agents: Record<string, AgentDefinition> = {};
  for (const file of flags.agents) {
    for (const [name, agent] of Object.entries(await loadAgents(file))) {
      if (Object.hasOwn(agents, name))
        throw new UsageError(`Two agents are named '${name}' (the second in ${file}); rename one of them.`);
      agents[name] = agent;
    }
  }
  const token = process.env[TOKEN_ENV] || generateToken();
  sayIfNew(flags.store);
  const store = await openCliStore(flags.store);
  let worker;
  try {
    worker = createWorker({
      store,
      agents,
      ...workerReports('dev', flags.quiet === true),
    });
  } catch (error) {
    await store.close();
    throw new UsageError(`${flags.agents.join(', ')}: ${oneLine(error)}`);
  }
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve({ store, token, host: flags.host, port: flags.port });
  } catch (error) {
    await store.close();
    throw new UsageError(`cannot listen on ${flags.host}:${flags.port}: ${oneLine(error)}`);
  }
  const names = Object.keys(agents);
  const removeLink = writeDevLink(flags.store, { url: server.url, token, pid: process.pid, agents: names });
  // Removed however the process ends (an uncaught error included); a kill -9 leaves it, and the
  // next command sees that its process is gone.
  process.once('exit', removeLink);
  worker.start();

  const out = process.stdout;
  out.write(`turnkit dev: console ${server.url}/console · API ${server.url}/api\n`);
  out.write(`token (paste it to sign in): ${token}\n`);
  out.write(`${safeText(`store: ${flags.store} (PGlite) · agents: ${names.join(', ') || '(none)'}`)}\n`);
  out.write(
    `${safeText(`Other terminals reach this store through it (${devFilePath(flags.store)}): turnkit ls, show, approve, reject, cancel, watch, run --store.`)}\n`,
  );
  out.write('Ctrl+C stops it.\n');

  const signal = await stopSignal();
  process.stderr.write(`turnkit dev: ${signal}: stopping…\n`);
  removeLink();
  await server.close();
  await worker.stop({ deadlineMs: 10_000 });
  await store.close();
  return EXIT.ok;
}

export function registerDev(program: Command, { configure, setExit }: CommandKit): void {
  configure(program.command('dev'))
    .description('Run a worker, the HTTP API and the console on a local store, in one process.')
    .requiredOption(
      '--agents <files...>',
      'modules exporting `agents` ({ [name]: { model, tools, … } }), or scenario files (each an agent named after the file)',
    )
    .option('--store <dir>', `the PGlite directory of the turns (created if missing)`, DEFAULT_STORE)
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option('--port <port>', 'the port to listen on (0 picks a free one)', port, 4700)
    .option('--quiet', 'no line per worker event on standard error (faults are still reported)')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  $ turnkit dev --agents packages/cli/examples/delete-files.ts',
        '  $ turnkit run packages/cli/examples/delete-files.ts --store     # in another terminal: parks',
        '  $ turnkit approve <turn> call_2                                  # the worker of turnkit dev goes on',
        '',
        `The token: ${TOKEN_ENV}, or a new one on each start; both are printed and written (mode 0600)`,
        'with the address in turnkit-dev.json in the store directory, removed when dev stops.',
      ].join('\n'),
    )
    .action(async (flags: DevFlags) => setExit(await devCommand(flags)));
}

// The peers are installed for benchmarking only: into packages/bench/.peers (gitignored) with npm,
// on first use, never by `pnpm install` and never into a package users install.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot, peersDir } from './paths.js';

/** The exact peer versions benchmarked (AI SDK 6 under the alias `ai6`). */
export const PEER_SPECS: readonly string[] = [
  'ai6@npm:ai@^6.0.322',
  'zod@^4',
  '@openai/agents@^0.20.0',
  'langchain@^1.5.14',
  '@langchain/core@^1.4.0',
  '@langchain/langgraph@^1.7.3',
  '@mariozechner/pi-agent-core@^0.73.1',
  '@mariozechner/pi-ai@^0.73.1',
  // The durable comparison: LangGraph's Postgres checkpointer, and the `pg` it uses.
  '@langchain/langgraph-checkpoint-postgres@^1',
  'pg@^8',
];

const MARKER = join(peersDir, 'installed.json');
const LOADER = join(peersDir, 'load.mjs');

function packageName(spec: string): string {
  const at = spec.indexOf('@', 1);
  return at === -1 ? spec : spec.slice(0, at);
}

/** True when every peer package is installed with the current specs. */
export function peersInstalled(): boolean {
  if (!existsSync(MARKER)) return false;
  try {
    const marker = JSON.parse(readFileSync(MARKER, 'utf8')) as { specs?: unknown };
    const sameSpecs = JSON.stringify(marker.specs) === JSON.stringify(PEER_SPECS);
    return sameSpecs && PEER_SPECS.every((spec) => existsSync(join(peersDir, 'node_modules', packageName(spec), 'package.json')));
  } catch {
    return false;
  }
}

/**
 * Installs the peers into packages/bench/.peers with `npm install --prefix` unless they are
 * already there, and says so on `log`. Throws with npm's output when the install fails.
 */
export function ensurePeers(log: (line: string) => void): void {
  if (!peersInstalled()) {
    const where = relative(process.cwd(), peersDir) || peersDir;
    log(`Installing the benchmark peers into ${where} with npm (first use only; pnpm install never installs them):`);
    log(`  ${PEER_SPECS.join(' ')}`);
    mkdirSync(peersDir, { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const args = ['install', '--prefix', peersDir, '--no-audit', '--no-fund', '--loglevel=error', ...PEER_SPECS];
    const started = Date.now();
    const done = spawnSync(npm, args, { cwd: packageRoot, encoding: 'utf8' });
    if (done.status !== 0) {
      const output = `${done.stdout ?? ''}${done.stderr ?? ''}${done.error ? String(done.error) : ''}`.trim();
      throw new Error(
        `Installing the benchmark peers failed (npm ${args.join(' ')}); check access to the npm registry and retry.\n${output}`,
      );
    }
    writeFileSync(MARKER, `${JSON.stringify({ specs: PEER_SPECS }, null, 2)}\n`);
    log(`Installed the peers in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  }
  // A module inside .peers, so that its dynamic import() resolves bare names from .peers/node_modules
  // with the ESM conditions (createRequire would pick some peers' CommonJS builds instead).
  if (!existsSync(LOADER)) writeFileSync(LOADER, 'export const load = (name) => import(name);\n');
}

let loader: Promise<{ load: (name: string) => Promise<unknown> }> | undefined;

/** Imports a peer package (by its name in .peers, e.g. 'ai6/test') as the given module shape. */
export async function importPeer<T>(name: string): Promise<T> {
  loader ??= import(pathToFileURL(LOADER).href) as Promise<{ load: (name: string) => Promise<unknown> }>;
  return (await (await loader).load(name)) as T;
}

// A new PGlite store, as a user's first `turnkit run --store`, `turnkit dev` or `openStore(dir)`
// pays it: a fresh process that opens a store in a directory that does not exist yet, with and
// without the copy of a fresh cluster the store keeps (packages/store/src/db/pglite-template.ts).
// Each run gets a temporary directory of its own (TMPDIR), so "initdb" never finds a copy and
// "from the copy" finds the one a first, unmeasured process made there.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';

const CHILD = fileURLToPath(new URL('./new-store-child.js', import.meta.url));

export interface NewStoreFigure {
  readonly how: 'initdb' | 'from the copy';
  readonly runs: number;
  /** Median wall time of the process, from its start to its exit (ms). */
  readonly wallMs: number;
  /** Median CPU time of the process (ms). */
  readonly cpuMs: number;
}

/** One process opening a new store under `tmp`; its wall and CPU time. */
function open(tmp: string, name: string): { wallMs: number; cpuMs: number } {
  const started = performance.now();
  const child = spawnSync(process.execPath, [CHILD, join(tmp, name)], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' });
  const wallMs = performance.now() - started;
  if (child.status !== 0) throw new Error(`opening a new store failed (exit ${child.status}): ${child.stderr}`);
  return { wallMs, cpuMs: (JSON.parse(child.stdout) as { cpuMs: number }).cpuMs };
}

export function measureNewStore(runs: number): NewStoreFigure[] {
  const samples = { initdb: [] as { wallMs: number; cpuMs: number }[], copy: [] as { wallMs: number; cpuMs: number }[] };
  const withCopy = mkdtempSync(join(tmpdir(), 'turnkit-bench-new-store-'));
  try {
    open(withCopy, 'first'); // makes the copy
    for (let i = 0; i < runs; i += 1) {
      const bare = mkdtempSync(join(tmpdir(), 'turnkit-bench-new-store-'));
      try {
        samples.initdb.push(open(bare, 'store'));
      } finally {
        rmSync(bare, { recursive: true, force: true });
      }
      samples.copy.push(open(withCopy, `store-${i}`));
    }
  } finally {
    rmSync(withCopy, { recursive: true, force: true });
  }
  const figure = (how: NewStoreFigure['how'], of: { wallMs: number; cpuMs: number }[]): NewStoreFigure => ({
    how,
    runs,
    wallMs: median(of.map((s) => s.wallMs)),
    cpuMs: median(of.map((s) => s.cpuMs)),
  });
  return [figure('initdb', samples.initdb), figure('from the copy', samples.copy)];
}

// vitest's global set-up: makes the copy of a fresh PGlite cluster that new PGlite directory stores
// start from (packages/store/src/db/pglite-template.ts) once, before any test file runs, when the
// temporary directory has none (a fresh machine or TMPDIR). Without it the first new stores of the
// run each make it by initdb at the same time, about 10 s of CPU each, and a CLI process doing it
// under a loaded CI machine can run past the tests' 50 s limit for one command.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Opens (and so makes) a new PGlite directory store when the copy of a fresh cluster is missing. */
export default async function setup(): Promise<void> {
  const { templateFile } = await import('../src/db/pglite-template.ts');
  const file = templateFile();
  if (file === null || existsSync(file)) return;
  const { openStore } = await import('../src/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'turnkit-template-'));
  try {
    await (await openStore(join(dir, 'store'))).close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

// Both src/*.ts (tests) and dist/*.js (pnpm bench) sit one level below the package root.
export const packageRoot = fileURLToPath(new URL('../', import.meta.url));
/** Where the peers' packages are installed for benchmarking only (gitignored). */
export const peersDir = join(packageRoot, '.peers');

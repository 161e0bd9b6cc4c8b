// Loading a driver: each is an optional peer dependency, imported only when a store of its kind is
// opened; and the one name written into SQL, a Postgres schema, checked.

import type { ModuleLoader } from './types.js';

const defaultLoader: ModuleLoader = (name) => import(name);

/**
 * Imports an optional peer dependency, or throws an Error that says which package to install
 * `beside` which of ours (the store's drivers; the CLI's providers and tsx use it too).
 */
export async function loadDriver(
  name: string,
  what: string,
  load: ModuleLoader = defaultLoader,
  beside = '@turnkit/store',
): Promise<unknown> {
  try {
    return await load(name);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const code = (error as NodeJS.ErrnoException | null)?.code;
    const install = packageOf(name);
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (package|module)/.test(why);
    throw new Error(
      missing
        ? `${what} needs the package '${install}', which is not installed. Install it next to ${beside}: npm install ${install}`
        : `${what} needs the package '${install}', which is installed but could not be loaded (${why}). Reinstall it: npm install ${install}`,
    );
  }
}

/** The package a module specifier is in: `tsx/esm/api` → `tsx`, `@scope/name/sub` → `@scope/name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a Postgres schema name (it is written into SQL, so only plain lower-case names pass). */
export function checkSchemaName(schema: string): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(
      `openStore option \`schema\` must be a plain lower-case name (letters, digits, '_', up to 63), got ${JSON.stringify(schema)}.`,
    );
  }
  return schema;
}

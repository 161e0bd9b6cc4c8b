// The CLI's optional peers (the AI SDK providers, tsx, PGlite through the store): imported only
// when a command needs one, with the store's loader, so a missing one is a UsageError (exit 2)
// that names what to install.

import { loadDriver } from '@turnkit/store/internal';
import { UsageError } from './errors.js';

/** Imports the optional peer `name` for `what` (e.g. '--provider openai'), or throws a UsageError saying what to install. */
export async function loadPeer(name: string, what: string): Promise<unknown> {
  try {
    return await loadDriver(name, what, (module) => import(module), '@turnkit/cli');
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

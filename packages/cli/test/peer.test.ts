// The CLI's optional peers (tsx, the AI SDK providers, PGlite) go through the store's loader: a
// missing one is a UsageError (exit 2) naming the package to install next to @turnkit/cli.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { loadPeer } from '../src/peer.js';

describe('loadPeer', () => {
  it('loads an installed peer', async () => {
    const tsx = (await loadPeer('tsx/esm/api', 'Loading x.ts (TypeScript)')) as { tsImport: unknown };
    expect(typeof tsx.tsImport).toBe('function');
  });

  it('names the package to install, not the entry point, for a missing peer (scoped and not)', async () => {
    const scoped = loadPeer('@turnkit-not-installed/provider/sub/path', '--provider x');
    await expect(scoped).rejects.toBeInstanceOf(UsageError);
    await expect(scoped).rejects.toThrow(
      "--provider x needs the package '@turnkit-not-installed/provider', which is not installed. Install it next to @turnkit/cli: npm install @turnkit-not-installed/provider",
    );
    await expect(loadPeer('turnkit-not-installed/esm/api', 'Loading y.ts (TypeScript)')).rejects.toThrow(
      /needs the package 'turnkit-not-installed',.*npm install turnkit-not-installed$/,
    );
  });
});

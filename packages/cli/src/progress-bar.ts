// The progress bar of the long commands (`turnkit check`): on stderr, and only on a terminal.

import cliProgress from 'cli-progress';

/** A bar with `format` on stderr when it is a terminal; null otherwise (pipes and CI get no bar). */
export function stderrBar(format: string): cliProgress.SingleBar | null {
  if (process.stderr.isTTY !== true) return null;
  return new cliProgress.SingleBar(
    { stream: process.stderr, format, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
}

// A process that tries to take the lock of a PGlite directory at a given moment (so several race),
// prints `took` or `refused`, and holds what it took until stdin closes.
//   node --import tsx --conditions=@turnkit/source take.ts <dataDir> <startAtMs>
import { takeLock } from '../../src/sql.js';

const [dataDir, startAt] = process.argv.slice(2) as [string, string];
while (Date.now() < Number(startAt)) {
  // Wait for the common start (a busy wait keeps the start times close).
}
try {
  takeLock(dataDir);
  process.stdout.write('took\n');
} catch (error) {
  process.stdout.write(`refused ${(error as Error).message}\n`);
}
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));

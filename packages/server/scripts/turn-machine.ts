// Regenerates src/console/turn-machine.ts, the Mermaid text of the turn machine that the console
// draws, from @turnkit/check's `toMermaid(turnSpec)`. The server reads the checked-in module, so
// neither @turnkit/check nor xstate loads when it runs; test/turn-machine.test.ts fails when the
// module is stale.
// Run: pnpm --filter @turnkit/server run diagram
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { toMermaid, turnSpec } from '@turnkit/check';

export function turnMachineModule(mermaid: string): string {
  const lines = mermaid.split('\n').map((line) => `  ${JSON.stringify(line).replace(/^"(.*)"$/, (_, body: string) => `'${body.replace(/\\"/g, '"').replace(/'/g, "\\'")}'`)},`);
  return [
    '// The turn machine as Mermaid text, generated from @turnkit/check\'s `toMermaid(turnSpec)` by',
    '// `pnpm --filter @turnkit/server run diagram`: do not edit. test/turn-machine.test.ts fails when',
    '// it is stale. Checked in so the server draws its diagram without loading @turnkit/check or xstate.',
    'export const TURN_MACHINE_MERMAID = [',
    ...lines,
    "].join('\\n');",
    '',
  ].join('\n');
}

export const MODULE_PATH = fileURLToPath(new URL('../src/console/turn-machine.ts', import.meta.url));

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const before = readFileSync(MODULE_PATH, { encoding: 'utf8', flag: 'a+' });
  const after = turnMachineModule(toMermaid(turnSpec));
  if (after === before) console.log(`${MODULE_PATH} is up to date.`);
  else {
    writeFileSync(MODULE_PATH, after);
    console.log(`Wrote ${MODULE_PATH}.`);
  }
}

// Regenerates the Mermaid diagram in docs/turn-machine.md from `turnSpec`.
// Run: pnpm --filter @turnkit/check run diagram
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { replaceDiagram, toMermaid } from '../src/diagram.js';
import { turnSpec } from '../src/spec.js';

const docPath = fileURLToPath(new URL('../../../docs/turn-machine.md', import.meta.url));
const before = readFileSync(docPath, 'utf8');
const after = replaceDiagram(before, toMermaid(turnSpec));
if (after === before) {
  console.log(`${docPath} is up to date.`);
} else {
  writeFileSync(docPath, after);
  console.log(`Updated the diagram in ${docPath}.`);
}

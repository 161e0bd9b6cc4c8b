import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DIAGRAM_END, DIAGRAM_START, replaceDiagram } from '../src/diagram.ts';
import { toDot, toMermaid, turnSpec } from '@turnkit/check';

const docPath = fileURLToPath(new URL('../../../docs/turn-machine.md', import.meta.url));
const REGENERATE =
  'The diagram in docs/turn-machine.md is out of date with turnSpec. Regenerate it with: pnpm --filter @turnkit/check run diagram';

describe('diagrams of turnSpec', () => {
  it('docs/turn-machine.md holds the current generated Mermaid diagram', () => {
    const doc = readFileSync(docPath, 'utf8');
    expect(doc).toContain(DIAGRAM_START);
    expect(doc).toContain(DIAGRAM_END);
    const fresh = replaceDiagram(doc, toMermaid(turnSpec));
    expect(fresh === doc, REGENERATE).toBe(true);
  });

  it('draws every status and every transition of the spec', () => {
    const mermaid = toMermaid(turnSpec);
    for (const status of [
      'ready',
      'calling_model',
      'dispatching',
      'awaiting_approval',
      'executing_approved',
      'steering',
      'finalizing',
      'stopped',
      'failed',
      'cancelled',
    ]) {
      expect(mermaid).toContain(`state "${status}" as ${status}`);
    }
    expect(mermaid).toContain('calling_model__tools_allowed --> calling_model__final_only : REPLY_REPEATED [afterABatch]');
    expect(mermaid).toContain('any_status --> cancelled : CANCEL');
    expect(mermaid).toContain('steering --> calling_model__final_only : COMPACTED_AT_LIMIT');
    const dot = toDot(turnSpec);
    expect(dot).toMatch(/^digraph "turn" \{/);
    expect(dot).toContain('"dispatching" -> "awaiting_approval" [label="TOOLS_PARKED"];');
    expect(dot).toContain('"awaiting_approval" -> "executing_approved" [label="APPROVE"];');
    expect(dot).toContain('"stopped" [peripheries=2];');
  });

  it('refuses a document without markers, saying what to add', () => {
    expect(() => replaceDiagram('# no markers', 'stateDiagram-v2\n')).toThrow(/no diagram markers/);
  });
});

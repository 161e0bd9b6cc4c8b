// The console's diagram is drawn from a checked-in module (src/console/turn-machine.ts), so the
// server loads neither @turnkit/check nor xstate. This regenerates it and fails when it is stale.
import { readdirSync, readFileSync } from 'node:fs';
import { toMermaid, turnSpec } from '@turnkit/check';
import { describe, expect, it } from 'vitest';
import { MODULE_PATH, turnMachineModule } from '../scripts/turn-machine.ts';
import { TURN_MACHINE_MERMAID } from '../src/console/turn-machine.js';

const STALE = 'src/console/turn-machine.ts is stale: run `pnpm --filter @turnkit/server run diagram` and commit it.';

describe('the turn machine module', () => {
  it("is @turnkit/check's toMermaid(turnSpec), as the generator writes it", () => {
    expect(TURN_MACHINE_MERMAID, STALE).toBe(toMermaid(turnSpec));
    expect(readFileSync(MODULE_PATH, 'utf8'), STALE).toBe(turnMachineModule(toMermaid(turnSpec)));
  });

  it('is all the server needs: no source of the server imports @turnkit/check or xstate', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).not.toContain('@turnkit/check');
    expect(Object.keys(manifest.dependencies)).not.toContain('xstate');
    const sources = readdirSync(new URL('../src/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    for (const file of sources) {
      const text = readFileSync(new URL(`../src/${file}`, import.meta.url), 'utf8');
      expect(text, file).not.toMatch(/from '(@turnkit\/check|xstate)[^']*'|import\('(@turnkit\/check|xstate)/);
    }
  });
});

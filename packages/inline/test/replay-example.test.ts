import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runTurn } from '@turnkit/inline';
import { replay, scriptedModel, text } from '@turnkit/testing';

it('replays a recorded turn without calling the model', async () => {
  const result = await runTurn({ model: scriptedModel([text('hello')]), input: 'hi', trace: true });
  const file = join(mkdtempSync(join(tmpdir(), 'turnkit-')), 'turn.trace.json');
  writeFileSync(file, JSON.stringify(result.trace));

  // Later, say after upgrading @turnkit/core: the recorded events go through `step` again.
  const report = replay(JSON.parse(readFileSync(file, 'utf8')));
  expect(report.ok, report.ok ? '' : report.difference.message).toBe(true);
});

// A suspended result goes back into resumeTurn as users write it, with no cast. `pnpm typecheck`
// compiles this file under exactOptionalPropertyTypes (a type error here fails it); the runs below
// check that each form also resumes the turn correctly.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { resumeTurn, runTurn, type RunTurnOptions, type SuspendedTurnResult, type TurnResult } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => ({ deployed: service }),
});
const script = () => [toolCalls(call('deploy', { service: 'api' })), text('{"done":true}')];
const approve = { call_1: { type: 'approve' } } as const;

async function suspended(options: RunTurnOptions): Promise<SuspendedTurnResult> {
  const result: TurnResult = await runTurn(options);
  if (result.status !== 'suspended') throw new Error(`expected a suspended turn, got ${result.status}`);
  return result;
}

describe('resumeTurn takes a suspended result as it is', () => {
  it('{ ...result, model, tools, decisions }', async () => {
    const model = scriptedModel(script());
    const result = await suspended({ model, tools: [deploy], input: 'Deploy api.' });
    const resumed = await resumeTurn({ ...result, model, tools: [deploy], decisions: approve });
    expect(resumed.status).toBe('stopped');
    expect(transcriptLines(resumed.transcript).at(-2)).toBe('tool call_1 deploy: ok {"deployed":"api"}');
  });

  it('{ ...result, ...options, decisions }: the options of runTurn, output schema and trace included', async () => {
    const options = {
      model: scriptedModel(script()),
      tools: [deploy],
      input: 'Deploy api.',
      output: z.object({ done: z.boolean() }),
      trace: true,
    } satisfies RunTurnOptions;
    const result = await suspended(options);
    expect(result.trace?.entries.length).toBeGreaterThan(0);
    const resumed = await resumeTurn({ ...result, ...options, decisions: approve });
    expect(resumed.output).toEqual({ done: true });
    expect(resumed.trace?.initial.status).toBe('awaiting_approval');
  });

  it('{ ...JSON.parse(saved), model, tools, decisions } in the same or another process', async () => {
    const model = scriptedModel(script());
    const saved = JSON.stringify(await suspended({ model, tools: [deploy], input: 'Deploy api.' }));
    const resumed = await resumeTurn({ ...JSON.parse(saved), model, tools: [deploy], decisions: approve });
    expect(resumed.status).toBe('stopped');
  });

  it('{ ...options, state, transcript } with the fields picked by hand', async () => {
    const options = { model: scriptedModel(script()), tools: [deploy] };
    const result = await suspended({ ...options, input: 'Deploy api.' });
    const resumed = await resumeTurn({
      ...options,
      state: result.state,
      transcript: result.transcript,
      grants: result.grants,
      budgetUsage: result.budgetUsage,
      decisions: approve,
    });
    expect(resumed.status).toBe('stopped');
  });
});

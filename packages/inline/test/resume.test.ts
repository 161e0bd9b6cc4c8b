import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDispatcher, defineTool } from '@turnkit/dispatch';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { add, deploy } from './run-tools.ts';

describe('resumeTurn', () => {
  it('carries grants through suspension and restores them on resume', async () => {
    const dispatcher = createDispatcher({ tools: [add, deploy], grants: [{ scope: 'tool', tool: 'add' }] });
    const model = scriptedModel([
      toolCalls(call('deploy', { service: 'api' })),
      toolCalls(call('deploy', { service: 'db' })),
      text('done'),
    ]);
    const first = await runTurn({ model, tools: dispatcher, input: 'deploy both' });
    expect(first.status).toBe('suspended');
    // Grants configured on the dispatcher are the program's, not the turn's: a suspended result carries the turn's only.
    expect(first.grants).toEqual([]);
    expect(first.budgetUsage).toEqual({ total: 0, perTool: {} });
    const saved = JSON.parse(JSON.stringify(first));
    // A remembered grant made while resuming lets the second deploy run without asking.
    const second = await resumeTurn({
      ...saved,
      model,
      tools: [add, deploy],
      decisions: { call_1: { type: 'approve', remember: 'tool' } },
    });
    expect(second.status).toBe('stopped');
    expect(transcriptLines(second.transcript).slice(2)).toEqual([
      'tool call_1 deploy: ok "deployed api"',
      'assistant: [call_2 deploy]',
      'tool call_2 deploy: ok "deployed db"',
      'assistant: done',
    ]);
    expect(second.grants).toBeUndefined();
  });

  it('suspends again when resumed without decisions and no approve', async () => {
    const model = scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('done')]);
    const first = await runTurn({ model, tools: [deploy], input: 'x' });
    const again = await resumeTurn({ state: first.state, transcript: first.transcript, model, tools: [deploy] });
    expect(again.status).toBe('suspended');
    expect(again.pending).toEqual(first.pending);
    const asked = await resumeTurn({
      state: first.state,
      transcript: first.transcript,
      model,
      tools: [deploy],
      approve: () => ({ call_1: { type: 'approve' } }),
    });
    expect(asked.status).toBe('stopped');
  });

  it('resumes a state persisted while tools ran: they get interrupted results and are not re-run', async () => {
    const states: { status: string; state: unknown }[] = [];
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Crashes the process (here: never ends).',
      input: z.object({}),
      execute: () => new Promise(() => undefined),
    });
    const controller = new AbortController();
    const first = await runTurn({
      model: scriptedModel([toolCalls(call('stubborn'))]),
      tools: [stubborn],
      input: 'go',
      signal: controller.signal,
      onStep: ({ state }) => {
        states.push({ status: state.status, state: JSON.parse(JSON.stringify(state)) });
        if (state.status === 'dispatching') queueMicrotask(() => controller.abort('process died'));
      },
    });
    expect(first.status).toBe('cancelled');
    const saved = states.find((s) => s.status === 'dispatching')!.state;
    const model = scriptedModel([text('The tool was interrupted.')]);
    const transcript = first.transcript.slice(0, 2);
    const resumed = await resumeTurn({ state: saved, transcript, model, tools: [stubborn] });
    expect(resumed.status).toBe('stopped');
    expect(transcriptLines(resumed.transcript)).toEqual([
      'user: go',
      'assistant: [call_1 stubborn]',
      expect.stringMatching(/^tool call_1 stubborn: error interrupted/),
      'assistant: The tool was interrupted.',
    ]);
  });

  it('lists only the undecided calls as pending after a partial decision', async () => {
    const model = scriptedModel([toolCalls(call('deploy', { service: 'a' }), call('deploy', { service: 'b' })), text('done')]);
    const first = await runTurn({ model, tools: [deploy], input: 'x' });
    expect(first.pending?.map((p) => p.call.id)).toEqual(['call_1', 'call_2']);
    const partial = await resumeTurn({
      state: first.state,
      transcript: first.transcript,
      model,
      tools: [deploy],
      decisions: { call_2: { type: 'reject' } },
    });
    expect(partial.status).toBe('suspended');
    expect(partial.pending?.map((p) => p.call.id)).toEqual(['call_1']);
    const done = await resumeTurn({
      ...JSON.parse(JSON.stringify(partial)),
      model,
      tools: [deploy],
      decisions: { call_1: { type: 'approve' } },
    });
    expect(transcriptLines(done.transcript).slice(2, 4)).toEqual([
      'tool call_1 deploy: ok "deployed a"',
      expect.stringMatching(/^tool call_2 deploy: error rejected\./),
    ]);
  });

  it('refuses to resume a turn that never started', async () => {
    const t = await runTurn({ model: scriptedModel([text('x')]), input: 'x', trace: true });
    await expect(resumeTurn({ state: t.trace!.initial, transcript: [], model: scriptedModel([]) })).rejects.toThrow(
      /never started; start it with runTurn/,
    );
  });

  it('throws a TurnStateError for a garbage state on resume', async () => {
    await expect(resumeTurn({ state: { version: 1 }, transcript: [], model: scriptedModel([]) })).rejects.toThrow(
      /Invalid turn state/,
    );
  });
});

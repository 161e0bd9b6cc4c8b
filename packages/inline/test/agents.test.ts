// Multi-agent turns in-process (docs/agents.md): a supervisor delegates to a researcher (a child
// turn with its own model, tools and transcript) and hands off to a writer; the runtime tools go
// through the dispatcher like any tool; a child's parked call is decided from the parent, also
// after a suspend and a JSON round trip; a cancel ends the whole tree.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Effect, ParkedCall } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import { createAgent, resumeTurn, runTurn, type NamedAgent } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';

const search = defineTool({
  name: 'search',
  description: 'Searches the notes.',
  input: z.object({ q: z.string() }),
  readOnly: true,
  execute: ({ q }) => `notes on ${q}: the bridge opened in 1932`,
});
const publish = defineTool({
  name: 'publish',
  description: 'Publishes a page.',
  input: z.object({ title: z.string() }),
  needsApproval: true,
  execute: ({ title }) => `published ${title}`,
});

function agents() {
  const researcher: NamedAgent = {
    name: 'researcher',
    description: 'Finds facts in the notes.',
    system: 'You research.',
    model: scriptedModel([
      toolCalls(call('search', { q: 'bridge' })),
      text('It opened in 1932.', { usage: { inputTokens: 7, outputTokens: 3 } }),
    ]),
    tools: [search],
    limits: { maxIterations: 3 },
  };
  const writer: NamedAgent = {
    name: 'writer',
    description: 'Writes the answer.',
    system: 'You write.',
    model: scriptedModel([text('The bridge opened in 1932.')]),
  };
  const supervisor = scriptedModel([
    toolCalls(call('transfer_task', { agent: 'researcher', task: 'When did the bridge open?' })),
    toolCalls(call('handoff', { agent: 'writer' })),
  ]);
  return { researcher, writer, supervisor };
}

describe('a supervisor that delegates and hands off', () => {
  it("the child's answer is the transfer_task result; after the handoff the writer's model answers; usage adds up", async () => {
    const { researcher, writer, supervisor } = agents();
    const effects: Effect[] = [];
    const result = await runTurn({
      name: 'supervisor',
      model: supervisor,
      system: 'You lead.',
      delegates: [researcher],
      handoffs: [writer],
      input: 'When did the bridge open?',
      onEffect: (e) => effects.push(e),
    });
    expect(result.status).toBe('stopped');
    expect(result.output).toBe('The bridge opened in 1932.');
    expect(transcriptLines(result.transcript)).toEqual([
      'system: You lead.',
      'user: When did the bridge open?',
      'assistant: [call_1 transfer_task]',
      'tool call_1 transfer_task: ok "It opened in 1932."',
      'assistant: [call_2 handoff]',
      `tool call_2 handoff: ok "Handed off to the agent 'writer'."`,
      'system: You write.',
      'assistant: The bridge opened in 1932.',
    ]);
    // The child's transcript went to its own context: the parent saw its effects wrapped.
    const child = effects.flatMap((e) => (e.type === 'child' && e.effect.type === 'append' ? [e.effect.message] : []));
    expect(transcriptLines(child)).toEqual([
      'user: When did the bridge open?',
      'assistant: [call_1 search]',
      'tool call_1 search: ok "notes on bridge: the bridge opened in 1932"',
      'assistant: It opened in 1932.',
    ]);
    // The researcher's model saw its own system prompt and tools, not the supervisor's.
    const researcherModel = researcher.model as ReturnType<typeof scriptedModel>;
    expect(researcherModel.calls[0]?.messages[0]).toEqual({ role: 'system', content: 'You research.' });
    expect(researcherModel.calls[0]?.tools.map((t) => t.name)).toEqual(['search']);
    expect(supervisor.calls[0]?.tools.map((t) => t.name)).toEqual(['transfer_task', 'handoff']);
    expect(result.usage).toMatchObject({ modelCalls: 5, toolCalls: 3, inputTokens: 7, outputTokens: 3 });
    expect(result.state.agents?.agent).toBe('writer');
  });

  it('a call naming an agent it may not delegate to fails validation like any bad input, and no child runs', async () => {
    const { researcher, writer } = agents();
    const model = scriptedModel([toolCalls(call('transfer_task', { agent: 'writer', task: 'x' })), text('ok')]);
    const result = await runTurn({ name: 'supervisor', model, delegates: [researcher], handoffs: [writer], input: 'go' });
    const line = transcriptLines(result.transcript).find((l) => l.startsWith('tool call_1'));
    expect(line).toMatch(
      /^tool call_1 transfer_task: error Invalid input for 'transfer_task': \| - agent: Invalid input: expected "researcher"/,
    );
    expect(result.usage.modelCalls).toBe(2);
  });

  it('a permission rule by name makes a person decide a transfer; rejected, no child runs', async () => {
    const { researcher } = agents();
    const model = scriptedModel([toolCalls(call('transfer_task', { agent: 'researcher', task: 'x' })), text('ok')]);
    const seen: ParkedCall[][] = [];
    const result = await runTurn({
      name: 'supervisor',
      model,
      delegates: [researcher],
      permissions: { ask: ['transfer_task'] },
      approve: (pending) => {
        seen.push([...pending]);
        return { call_1: { type: 'reject', reason: 'not now' } };
      },
      input: 'go',
    });
    expect(seen[0]?.[0]?.agentPath).toEqual(['supervisor']);
    expect(result.status).toBe('stopped');
    expect((researcher.model as ReturnType<typeof scriptedModel>).calls).toHaveLength(0);
  });

  it('change_model: the rest of the turn asks for the model chosen', async () => {
    const model = scriptedModel([
      toolCalls(call('change_model', { model: 'big' })),
      toolCalls(call('search', { q: 'a' })),
      text('done'),
    ]);
    const result = await runTurn({ name: 'solo', model, tools: [search], models: ['big'], input: 'go' });
    expect(result.status).toBe('stopped');
    expect(model.calls.map((c) => c.modelOverride)).toEqual([undefined, 'big', 'big']);
  });
});

describe("a child's parked call", () => {
  function parkingTree() {
    const editor: NamedAgent = {
      name: 'editor',
      description: 'Publishes pages.',
      system: 'You edit.',
      model: scriptedModel([toolCalls(call('publish', { title: 'Bridge' })), text('Published.')]),
      tools: [publish],
    };
    const model = scriptedModel([toolCalls(call('transfer_task', { agent: 'editor', task: 'Publish it.' })), text('All done.')]);
    return { editor, model };
  }

  it('approve sees it with the agent path, and the decision reaches the child', async () => {
    const { editor, model } = parkingTree();
    const asked: { pending: readonly ParkedCall[]; path: readonly string[] | undefined }[] = [];
    const result = await runTurn({
      name: 'lead',
      model,
      delegates: [editor],
      input: 'go',
      approve: (pending, info) => {
        asked.push({ pending, path: info.agentPath });
        return { call_1: { type: 'approve' } };
      },
    });
    expect(asked).toEqual([
      {
        pending: [
          {
            call: { id: 'call_1', name: 'publish', input: { title: 'Bridge' } },
            input: { title: 'Bridge' },
            reason: "tool 'publish' needs approval",
            agentPath: ['lead', 'editor'],
          },
        ],
        path: ['lead', 'editor'],
      },
    ]);
    expect(result.output).toBe('All done.');
    expect(transcriptLines(result.transcript)).toContain('tool call_1 transfer_task: ok "Published."');
  });

  it('suspended: pending shows the path; resumed after a JSON round trip, only the child call runs, nothing re-runs', async () => {
    const { editor, model } = parkingTree();
    let runs = 0;
    const counting = defineTool({
      name: 'publish',
      description: 'Publishes a page.',
      input: z.object({ title: z.string() }),
      needsApproval: true,
      execute: ({ title }) => `published ${title} (${++runs})`,
    });
    const counted = { ...editor, tools: [counting] };
    const options = { name: 'lead', model, delegates: [counted] };
    const suspended = await runTurn({ ...options, input: 'go' });
    expect(suspended.status).toBe('suspended');
    expect(suspended.pending?.map((p) => [p.call.name, p.agentPath])).toEqual([['publish', ['lead', 'editor']]]);
    expect(suspended.state.status).toBe('delegating');
    const saved = JSON.parse(JSON.stringify(suspended));
    const resumed = await resumeTurn({ ...saved, ...options, decisions: { call_1: { type: 'approve' } } });
    expect(resumed.status).toBe('stopped');
    expect(runs).toBe(1);
    expect(transcriptLines(resumed.transcript)).toContain('tool call_1 transfer_task: ok "Published."');
    // The supervisor's model was called once before the suspend and once after; the editor's twice in all.
    expect(model.calls).toHaveLength(2);
  });

  it('a cancel while the child waits ends the tree: the child call and the transfer get cancelled results', async () => {
    const { editor, model } = parkingTree();
    const controller = new AbortController();
    const childEffects: Effect[] = [];
    const result = await createAgent({ name: 'lead', model, delegates: [editor] }).run('go', {
      signal: controller.signal,
      approve: () => {
        controller.abort('the user left');
        return new Promise(() => {});
      },
      onEffect: (e) => {
        if (e.type === 'child') childEffects.push(e.effect);
      },
    });
    expect(result.status).toBe('cancelled');
    const childLines = transcriptLines(childEffects.flatMap((e) => (e.type === 'append' ? [e.message] : [])));
    expect(childLines.at(-1)).toMatch(/^tool call_1 publish: error cancelled: the turn was cancelled/);
    expect(transcriptLines(result.transcript).at(-1)).toMatch(
      /^tool call_1 transfer_task: error cancelled: the turn was cancelled/,
    );
  });
});

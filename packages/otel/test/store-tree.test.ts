// A stored tree of agents traced by the store's worker (PGlite in memory, in this process, a real
// OpenTelemetry SDK tracer with an in-memory exporter): the child's invoke_agent span is under the
// parent's execute_tool span of its transfer_task call, with the child's own chat and execute_tool
// spans under it; and so again in the activation that goes on after the child's parked call is
// decided.
import { defineTool } from '@turnkit/dispatch';
import { traceTurn } from '@turnkit/otel';
import { createWorker, openStore, type AgentDefinition } from '@turnkit/store';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recorder } from './spans.js';

const look = defineTool({
  name: 'look',
  description: 'Looks a page up.',
  input: z.object({ q: z.string() }),
  readOnly: true,
  execute: ({ q }) => `notes on ${q}`,
});
const publish = defineTool({
  name: 'publish',
  description: 'Publishes a page.',
  input: z.object({ title: z.string() }),
  needsApproval: true,
  execute: ({ title }) => `published ${title}`,
});

describe('a stored tree of agents, traced by the worker', () => {
  it("the child's invoke_agent span is under the parent's execute_tool transfer_task span, in each activation", async () => {
    const rec = recorder();
    const agents: Record<string, AgentDefinition> = {
      supervisor: {
        model: scriptedModel([toolCalls(call('transfer_task', { agent: 'editor', task: 'Publish.' })), text('Done.')]),
        delegates: ['editor'],
        observe: ({ agent, traceContext, transcript }) =>
          traceTurn({ agent, tracer: rec.tracer, link: traceContext, transcript }),
      },
      editor: {
        description: 'Publishes pages.',
        model: scriptedModel([
          toolCalls(call('look', { q: 'bridge' })),
          toolCalls(call('publish', { title: 'Bridge' })),
          text('Published.'),
        ]),
        tools: [look, publish],
      },
    };
    const store = await openStore('memory://');
    try {
      const id = await store.submit({ agent: 'supervisor', input: 'Publish the page.', id: 'traced-tree' });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('awaiting_approval');
      const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
      const names = (spans: readonly ReadableSpan[]): string[] => spans.map((s) => s.name);

      // The first activation: the tree parks in the child.
      const [root1] = rec.named('invoke_agent supervisor');
      const [transfer1] = rec.named('execute_tool transfer_task');
      const [child1] = rec.named('invoke_agent editor');
      expect(root1?.attributes['turnkit.turn.status']).toBe('suspended');
      expect(parentOf(transfer1 as ReadableSpan)).toBe(root1?.spanContext().spanId);
      expect(parentOf(child1 as ReadableSpan)).toBe(transfer1?.spanContext().spanId);
      expect(child1?.attributes).toMatchObject({ 'gen_ai.conversation.id': `${id}/call_1`, 'turnkit.turn.status': 'suspended' });
      expect(names(rec.children(child1 as ReadableSpan))).toEqual(['chat', 'execute_tool look', 'chat']);

      // The decision reaches the child; the next activation (a fresh worker) goes on in it.
      await store.decide(id, { call_2: { type: 'approve' } });
      await createWorker({ store, agents }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('stopped');
      const root2 = rec.named('invoke_agent supervisor')[1] as ReadableSpan;
      const transfer2 = rec.named('execute_tool transfer_task')[1] as ReadableSpan;
      const child2 = rec.named('invoke_agent editor')[1] as ReadableSpan;
      expect(root2.attributes['turnkit.turn.status']).toBe('stopped');
      expect(root2.links.map((l) => l.context.spanId)).toEqual([root1?.spanContext().spanId]);
      expect(parentOf(transfer2)).toBe(root2.spanContext().spanId);
      expect(parentOf(child2)).toBe(transfer2.spanContext().spanId);
      expect(child2.attributes).toMatchObject({ 'gen_ai.conversation.id': `${id}/call_1`, 'turnkit.turn.status': 'stopped' });
      expect(names(rec.children(child2))).toEqual(['execute_tool publish', 'chat']);
      // The transfer's span ends after its child's; the root's model call after the child is the root's.
      expect(rec.spans().indexOf(transfer2)).toBeGreaterThan(rec.spans().indexOf(child2));
      expect(names(rec.children(root2))).toEqual(['execute_tool transfer_task', 'chat']);
    } finally {
      await store.close();
    }
  });
});

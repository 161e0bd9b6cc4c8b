import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { defineTool } from '@turnkit/dispatch';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { streamTurn } from '@turnkit/stream';
import { call, fail, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { traceTurn } from '@turnkit/otel';
import { recorder } from './spans.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});

describe('invoke_agent and chat spans', () => {
  it('a plain turn: one invoke_agent span (INTERNAL) with a chat span (CLIENT) per model call as children', async () => {
    const rec = recorder();
    const model = scriptedModel([
      toolCalls(call('add', { a: 1, b: 2 })),
      text('1 + 2 = 3', { usage: { inputTokens: 12, outputTokens: 5 }, modelId: 'gpt-test-2025' }),
    ]);
    const tracing = traceTurn({ agent: 'calculator', model: 'gpt-test', provider: 'openai', tracer: rec.tracer });
    const result = await tracing.run(() =>
      runTurn({ model, tools: [add], input: 'What is 1 + 2?', id: 'turn-1', ...tracing.hooks }),
    );
    expect(result.status).toBe('stopped');

    const agent = rec.one('invoke_agent calculator');
    expect(agent.kind).toBe(SpanKind.INTERNAL);
    expect(agent.parentSpanContext).toBeUndefined();
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'calculator',
      'gen_ai.conversation.id': 'turn-1',
      'gen_ai.provider.name': 'openai',
      'turnkit.turn.status': 'stopped',
      'turnkit.turn.stop_reason': 'completed',
    });
    expect(agent.status.code).toBe(SpanStatusCode.UNSET);

    const chats = rec.children(agent).filter((s) => s.name === 'chat gpt-test');
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.spanContext().traceId).toBe(agent.spanContext().traceId);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.conversation.id': 'turn-1',
      });
    }
    expect(chats[0]?.attributes['turnkit.turn.iteration']).toBe(1);
    expect(chats[1]?.attributes).toMatchObject({
      'turnkit.turn.iteration': 2,
      'gen_ai.response.model': 'gpt-test-2025',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 5,
    });
    // Inputs and outputs only on opt-in.
    for (const span of rec.spans())
      for (const key of Object.keys(span.attributes)) expect(key).not.toMatch(/messages|arguments|result|instructions/);
  });

  it('streamTurn takes the same hooks: the same spans for a streamed turn', async () => {
    const rec = recorder();
    const model = scriptedModel([toolCalls(call('add', { a: 2, b: 3 })), text('5')]);
    const tracing = traceTurn({ agent: 'streamer', model: 'm', tracer: rec.tracer });
    const result = await tracing.run(async () => {
      const stream = streamTurn({ model, tools: [add], input: '2 + 3?', ...tracing.hooks });
      for await (const _event of stream);
      return stream.result;
    });
    expect(result.status).toBe('stopped');
    const agent = rec.one('invoke_agent streamer');
    expect(rec.children(agent).map((s) => s.name)).toEqual(['chat m', 'execute_tool add', 'chat m']);
  });

  it('without an SDK registered nothing is recorded, the turn runs, and there is no context to save', async () => {
    const tracing = traceTurn({ agent: 'quiet' });
    const result = await tracing.run(() => runTurn({ model: scriptedModel([text('hi')]), input: 'hi', ...tracing.hooks }));
    expect(result.status).toBe('stopped');
    expect(tracing.traceContext()).toBeUndefined();
  });

  it('records messages only when recordContent is on', async () => {
    const rec = recorder();
    const model = scriptedModel([text('Hello there.')]);
    const tracing = traceTurn({ agent: 'greeter', tracer: rec.tracer, recordContent: true });
    await tracing.run(() => runTurn({ model, input: 'Hi!', ...tracing.hooks }));
    const agent = rec.one('invoke_agent greeter');
    const hi = [{ role: 'user', parts: [{ type: 'text', content: 'Hi!' }] }];
    expect(JSON.parse(String(agent.attributes['gen_ai.input.messages']))).toEqual(hi);
    expect(JSON.parse(String(agent.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hello there.' }], finish_reason: 'stop' },
    ]);
    const chat = rec.one('chat');
    expect(JSON.parse(String(chat.attributes['gen_ai.input.messages']))).toEqual(hi);
    expect(JSON.parse(String(chat.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hello there.' }], finish_reason: 'stop' },
    ]);
  });

  it('a retried model call: a failed chat span with error.type, then the retry (turnkit.model.attempt 1), same parent', async () => {
    const rec = recorder();
    const model = scriptedModel([fail({ message: 'overloaded', retryable: true }), text('done')]);
    const tracing = traceTurn({ agent: 'retrier', model: 'm1', tracer: rec.tracer });
    const result = await tracing.run(() =>
      runTurn({ model, input: 'go', limits: { maxModelRetries: 2, modelRetryBackoffMs: 0 }, ...tracing.hooks }),
    );
    expect(result.status).toBe('stopped');
    const agent = rec.one('invoke_agent retrier');
    const chats = rec.children(agent);
    expect(chats.map((s) => s.name)).toEqual(['chat m1', 'chat m1']);
    const [first, retry] = chats;
    expect(first?.status.code).toBe(SpanStatusCode.ERROR);
    expect(first?.attributes['error.type']).toBe('model_error');
    expect(first?.attributes['turnkit.model.attempt']).toBeUndefined();
    expect(retry?.status.code).toBe(SpanStatusCode.UNSET);
    expect(retry?.attributes['turnkit.model.attempt']).toBe(1);
    expect(retry?.attributes['error.type']).toBeUndefined();
  });

  it('a failed turn sets error.type and an ERROR status on invoke_agent', async () => {
    const rec = recorder();
    const model = scriptedModel([fail('no key configured')]);
    const tracing = traceTurn({ agent: 'broken', tracer: rec.tracer });
    const result = await tracing.run(() => runTurn({ model, input: 'go', ...tracing.hooks }));
    expect(result.status).toBe('failed');
    const agent = rec.one('invoke_agent broken');
    expect(agent.status.code).toBe(SpanStatusCode.ERROR);
    expect(agent.attributes['error.type']).toBe(result.error?.kind);
    expect(agent.attributes['turnkit.turn.status']).toBe('failed');
  });
});

describe('a tree of agents', () => {
  it("the child's invoke_agent span is under the parent's execute_tool span of its transfer_task call", async () => {
    const rec = recorder();
    const researcher = {
      name: 'researcher',
      description: 'Adds numbers.',
      model: scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]),
      tools: [add],
    };
    const model = scriptedModel([
      toolCalls(call('transfer_task', { agent: 'researcher', task: 'Add 1 and 2.' })),
      text('It is 3.'),
    ]);
    const tracing = traceTurn({ agent: 'supervisor', tracer: rec.tracer });
    const result = await tracing.run(() =>
      runTurn({ name: 'supervisor', model, delegates: [researcher], input: 'go', id: 'tree-1', ...tracing.hooks }),
    );
    expect(result.status).toBe('stopped');
    const root = rec.one('invoke_agent supervisor');
    const transfer = rec.one('execute_tool transfer_task');
    const child = rec.one('invoke_agent researcher');
    expect(transfer.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(child.parentSpanContext?.spanId).toBe(transfer.spanContext().spanId);
    expect(child.attributes).toMatchObject({ 'gen_ai.conversation.id': 'tree-1/call_1', 'turnkit.turn.status': 'stopped' });
    // The child's model calls and tools are its own span's children; the transfer ends after the child.
    expect(rec.children(child).map((s) => s.name)).toEqual(['chat', 'execute_tool add', 'chat']);
    const finished = rec.spans();
    expect(finished.indexOf(transfer)).toBeGreaterThan(finished.indexOf(child));
    expect(rec.children(root).map((s) => s.name)).toEqual(['chat', 'execute_tool transfer_task', 'chat']);
  });

  it("suspended in the child and resumed: the resumed child's invoke_agent span is under a transfer_task execute_tool span again", async () => {
    const rec = recorder();
    const confirm = defineTool({
      name: 'confirm',
      description: 'Confirms.',
      input: z.object({}),
      needsApproval: true,
      execute: () => 'confirmed',
    });
    const researcher = {
      name: 'researcher',
      description: 'Confirms.',
      model: scriptedModel([toolCalls(call('confirm', {})), text('Confirmed.')]),
      tools: [confirm],
    };
    const options = {
      name: 'supervisor',
      model: scriptedModel([toolCalls(call('transfer_task', { agent: 'researcher', task: 'Confirm.' })), text('Done.')]),
      delegates: [researcher],
    };
    const first = traceTurn({ agent: 'supervisor', tracer: rec.tracer });
    const suspended = await first.run(() => runTurn({ ...options, input: 'go', id: 'tree-2', ...first.hooks }));
    expect(suspended.status).toBe('suspended');
    const second = traceTurn({ agent: 'supervisor', tracer: rec.tracer, transcript: suspended.transcript });
    const resumed = await second.run(() =>
      resumeTurn({
        ...JSON.parse(JSON.stringify(suspended)),
        ...options,
        ...second.hooks,
        decisions: { call_1: { type: 'approve' } },
      }),
    );
    expect(resumed.status).toBe('stopped');
    const roots = rec.named('invoke_agent supervisor');
    const transfers = rec.named('execute_tool transfer_task');
    const children = rec.named('invoke_agent researcher');
    expect([roots.length, transfers.length, children.length]).toEqual([2, 2, 2]);
    for (const i of [0, 1]) {
      expect(transfers[i]?.parentSpanContext?.spanId).toBe(roots[i]?.spanContext().spanId);
      expect(children[i]?.parentSpanContext?.spanId).toBe(transfers[i]?.spanContext().spanId);
    }
    expect(transfers[1]?.attributes).toMatchObject({ 'gen_ai.tool.call.id': 'call_1', 'gen_ai.conversation.id': 'tree-2' });
    expect(rec.children(children[1] as (typeof children)[number]).map((s) => s.name)).toEqual(['execute_tool confirm', 'chat']);
  });
});

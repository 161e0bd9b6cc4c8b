// execute_tool spans, made through the dispatcher's execution wrapper: one per executed call,
// children of invoke_agent, the tool running in the span's context.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { defineTool, ToolError } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { traceTurn } from '@turnkit/otel';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recorder } from './spans.js';

const manager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(manager.enable());
});
afterAll(() => {
  manager.disable();
  context.disable();
});

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  readOnly: true,
  execute: ({ a, b }) => a + b,
});
const charge = defineTool({
  name: 'charge',
  description: 'Charges a card.',
  input: z.object({ cents: z.number() }),
  execute: ({ cents }) => {
    throw new ToolError(`card declined for ${cents} cents`, { kind: 'permission' });
  },
});

describe('execute_tool spans', () => {
  it('a plain turn: chat, execute_tool, chat under invoke_agent, with tool name, call id and type', async () => {
    const rec = recorder();
    const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('3')]);
    const tracing = traceTurn({ agent: 'calculator', model: 'm', tracer: rec.tracer });
    await tracing.run(() => runTurn({ model, tools: [add], input: '1 + 2?', id: 'turn-3', ...tracing.hooks }));
    const agent = rec.one('invoke_agent calculator');
    expect(rec.children(agent).map((s) => s.name)).toEqual(['chat m', 'execute_tool add', 'chat m']);
    const tool = rec.one('execute_tool add');
    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(tool.status.code).toBe(SpanStatusCode.UNSET);
    expect(tool.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'add',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'gen_ai.conversation.id': 'turn-3',
      'turnkit.tool.attempts': 1,
    });
  });

  it('a failed tool: error.type is the error kind, the status is ERROR, and the turn goes on', async () => {
    const rec = recorder();
    const model = scriptedModel([toolCalls(call('charge', { cents: 500 })), text('The card was declined.')]);
    const tracing = traceTurn({ agent: 'shop', tracer: rec.tracer });
    const result = await tracing.run(() =>
      runTurn({ model, tools: [charge], permissions: { allow: ['charge'] }, input: 'Pay.', ...tracing.hooks }),
    );
    expect(result.status).toBe('stopped');
    const tool = rec.one('execute_tool charge');
    expect(tool.attributes['error.type']).toBe('permission');
    // Without recordContent the error text (which may quote inputs) stays out of the span.
    expect(tool.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the tool failed (permission)' });
    expect(rec.one('invoke_agent shop').status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a tool retried by the dispatcher is one execute_tool span around all its tries', async () => {
    const rec = recorder();
    let tries = 0;
    const flaky = defineTool({
      name: 'flaky',
      description: 'Fails once, then works.',
      input: z.object({}),
      readOnly: true,
      retryPolicy: { transient: { attempts: 3, backoffMs: 0 } },
      execute: () => {
        tries++;
        if (tries === 1) throw new ToolError('connection reset', { kind: 'transient' });
        return 'ok';
      },
    });
    const model = scriptedModel([toolCalls(call('flaky', {})), text('done')]);
    const tracing = traceTurn({ agent: 'retry', tracer: rec.tracer });
    await tracing.run(() => runTurn({ model, tools: [flaky], input: 'go', ...tracing.hooks }));
    const span = rec.one('execute_tool flaky');
    expect(span.attributes['turnkit.tool.attempts']).toBe(2);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records arguments, result and error text only with recordContent', async () => {
    const rec = recorder();
    const model = scriptedModel([toolCalls(call('add', { a: 2, b: 2 }), call('charge', { cents: 1 })), text('ok')]);
    const tracing = traceTurn({ agent: 'both', tracer: rec.tracer, recordContent: true });
    await tracing.run(() =>
      runTurn({ model, tools: [add, charge], permissions: { allow: ['charge'] }, input: 'go', ...tracing.hooks }),
    );
    expect(rec.one('execute_tool add').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"a":2,"b":2}',
      'gen_ai.tool.call.result': '4',
    });
    expect(rec.one('execute_tool charge').status.message).toBe(
      "Error calling tool 'charge': ToolError (permission): card declined for 1 cents",
    );
  });

  it('the tool runs in its span: a span the tool starts is a child of execute_tool', async () => {
    const rec = recorder();
    const query = defineTool({
      name: 'query',
      description: 'Runs a query.',
      input: z.object({}),
      readOnly: true,
      execute: () => {
        rec.tracer.startActiveSpan('db.query', (span) => span.end());
        return trace.getActiveSpan() === undefined ? 'no active span' : 'in a span';
      },
    });
    const model = scriptedModel([toolCalls(call('query', {})), text('done')]);
    const tracing = traceTurn({ agent: 'db', tracer: rec.tracer });
    const result = await tracing.run(() => runTurn({ model, tools: [query], input: 'go', ...tracing.hooks }));
    expect(result.transcript.find((m) => m.role === 'tool')).toMatchObject({ result: { output: 'in a span' } });
    expect(rec.one('db.query').parentSpanContext?.spanId).toBe(rec.one('execute_tool query').spanContext().spanId);
  });
});

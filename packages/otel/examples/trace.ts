import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { traceTurn } from '@turnkit/otel';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

// Any OpenTelemetry SDK set-up works; an in-memory exporter keeps this example offline.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const add = defineTool({ name: 'add', description: 'Adds two numbers.', input: z.object({ a: z.number(), b: z.number() }), readOnly: true, execute: ({ a, b }) => a + b });
const model = scriptedModel([toolCalls(call('add', { a: 1, b: 2 })), text('1 + 2 = 3', { usage: { inputTokens: 20, outputTokens: 6 } })]);

const tracing = traceTurn({ agent: 'calculator', model: 'gpt-4.1-mini', provider: 'openai', tracer: provider.getTracer('my-app') });
await tracing.run(() => runTurn({ model, tools: [add], input: 'What is 1 + 2?', id: 'turn-1', ...tracing.hooks }));

// Print the spans as a tree: each span's children in the order they ended.
const spans = exporter.getFinishedSpans();
const print = (span: ReadableSpan, depth: number): void => {
  const usage = span.attributes['gen_ai.usage.output_tokens'];
  console.log(`${'  '.repeat(depth)}${span.name}${usage === undefined ? '' : ` (output tokens: ${String(usage)})`}`);
  for (const child of spans.filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId)) print(child, depth + 1);
};
for (const root of spans.filter((s) => s.parentSpanContext === undefined)) print(root, 0);

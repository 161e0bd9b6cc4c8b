import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { resumeTurn, runTurn } from '@turnkit/inline';
import { traceTurn } from '@turnkit/otel';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('my-app');
const deploy = defineTool({ name: 'deploy', description: 'Deploys a service.', input: z.object({ service: z.string() }), needsApproval: true, execute: ({ service }) => `deployed ${service}` });
const script = [toolCalls(call('deploy', { service: 'api' })), text('api is deployed.')];

// The first process: the turn parks for an approval; its trace context is saved with it.
const first = traceTurn({ agent: 'deployer', tracer });
const parked = await first.run(() => runTurn({ model: scriptedModel(script), tools: [deploy], input: 'Deploy api.', ...first.hooks }));
const file = JSON.stringify({ ...parked, traceContext: first.traceContext() }); // a file, a row, a queue message

// Another process, maybe a day later: the resumed activation links to the first one.
const saved = JSON.parse(file);
const second = traceTurn({ agent: 'deployer', tracer, link: saved.traceContext });
const model = scriptedModel(script, { startAt: saved.usage.modelCalls });
await second.run(() => resumeTurn({ ...saved, model, tools: [deploy], decisions: { call_1: { type: 'approve' } }, ...second.hooks }));

const [a, b] = exporter.getFinishedSpans().filter((span) => span.name === 'invoke_agent deployer');
console.log(a?.name, a?.attributes['turnkit.turn.status']);
console.log(b?.name, b?.attributes['turnkit.turn.status'], 'linked to the first:', b?.links[0]?.context.spanId === a?.spanContext().spanId);

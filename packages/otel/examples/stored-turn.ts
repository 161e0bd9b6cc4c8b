import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { traceTurn } from '@turnkit/otel';
import { type AgentDefinition, createWorker, openStore } from '@turnkit/store';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('my-app');
const deploy = defineTool({ name: 'deploy', description: 'Deploys a service.', input: z.object({ service: z.string() }), needsApproval: true, execute: ({ service }) => `deployed ${service}` });
const script = [toolCalls(call('deploy', { service: 'api' })), text('api is deployed.')];

// Each activation of a stored turn is traced; the store keeps its trace context with the turn.
const deployer = (startAt: number): AgentDefinition => ({
  model: scriptedModel(script, { startAt }),
  tools: [deploy],
  observe: ({ agent, traceContext, transcript }) => traceTurn({ agent, tracer, link: traceContext, transcript }),
});

const store = await openStore('memory://'); // or postgres://… shared by workers on many machines
const id = await store.submit({ agent: 'deployer', input: 'Deploy api.' });
await createWorker({ store, agents: { deployer: deployer(0) } }).runUntilIdle(); // parks for approval
await store.decide(id, { call_1: { type: 'approve' } }); // a person, in another process
await createWorker({ store, agents: { deployer: deployer(1) } }).runUntilIdle(); // any worker, later
await store.close();

const [a, b] = exporter.getFinishedSpans().filter((span) => span.name === 'invoke_agent deployer');
console.log(a?.name, a?.attributes['turnkit.turn.status']);
console.log(b?.name, b?.attributes['gen_ai.conversation.id'] === id, 'linked to the first:', b?.links[0]?.context.spanId === a?.spanContext().spanId);

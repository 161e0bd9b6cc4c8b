// A stored turn run by workers in two processes is one story: the first worker's invoke_agent span
// ends when the turn parks for approval, its trace context is kept in the store's turn row, and
// the worker that runs the turn after the decision (another process) opens a span linked to it.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createWorker, openStore } from '@turnkit/store';
import { describe, expect, it } from 'vitest';
import { tracedDeployer } from './fixtures/store-agent.js';
import { type ChildSpan, recorder } from './spans.js';

const run = promisify(execFile);
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const child = fileURLToPath(new URL('./fixtures/store-resume-traced.ts', import.meta.url));

describe('traced store workers', () => {
  it('keeps the trace context with the stored turn and links the next activation, in another process, to it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'turnkit-otel-store-')), 'db');
    const rec = recorder();
    const store = await openStore(dir);
    let id: string;
    try {
      id = await store.submit({ agent: 'deployer', input: 'Deploy api.' });
      await createWorker({ store, agents: { deployer: tracedDeployer(rec.tracer, 0) } }).runUntilIdle();
      expect((await store.get(id))?.status).toBe('awaiting_approval');
      await store.decide(id, { call_1: { type: 'approve' } });
    } finally {
      await store.close();
    }
    const parked = rec.one('invoke_agent deployer');
    expect(parked.ended).toBe(true);
    expect(parked.attributes['turnkit.turn.status']).toBe('suspended');
    expect(parked.attributes['gen_ai.conversation.id']).toBe(id);
    expect(rec.children(parked).map((s) => s.name)).toEqual(['chat']);
    expect(rec.named('execute_tool deploy')).toHaveLength(0);

    const { stdout } = await run(process.execPath, [tsx, '--conditions=@turnkit/source', child, dir, id], { timeout: 60_000 });
    const resumed = JSON.parse(stdout) as { status: string; pid: number; spans: ChildSpan[] };
    expect(resumed.status).toBe('stopped');
    expect(resumed.pid).not.toBe(process.pid);
    const agents = resumed.spans.filter((s) => s.name === 'invoke_agent deployer');
    expect(agents).toHaveLength(1);
    const agent = agents[0] as ChildSpan;
    expect(agent.parentSpanId).toBeNull();
    expect(agent.attributes['gen_ai.conversation.id']).toBe(id);
    expect(agent.links).toEqual([
      {
        traceId: parked.spanContext().traceId,
        spanId: parked.spanContext().spanId,
        attributes: { 'turnkit.link.reason': 'resumed' },
      },
    ]);
    const children = resumed.spans.filter((s) => s.parentSpanId === agent.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(['chat', 'execute_tool deploy']);
    const tool = children.find((s) => s.name === 'execute_tool deploy') as ChildSpan;
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'deploy',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.conversation.id': id,
    });
  });
});

// A turn parked for approval is one story across processes: the first process's invoke_agent span
// ends when the turn suspends, and the process that resumes it opens a new span linked to it.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runTurn } from '@turnkit/inline';
import { traceTurn } from '@turnkit/otel';
import { scriptedModel } from '@turnkit/testing';
import { describe, expect, it } from 'vitest';
import { deploy, script } from './fixtures/agent.js';
import { type ChildSpan, recorder } from './spans.js';

const run = promisify(execFile);
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const child = fileURLToPath(new URL('./fixtures/resume-traced.ts', import.meta.url));

describe('suspend and resume across processes', () => {
  it('ends the span at the suspension and links the resumed activation to it through the saved trace context', async () => {
    const rec = recorder();
    const tracing = traceTurn({ agent: 'deployer', tracer: rec.tracer });
    const first = await tracing.run(() =>
      runTurn({ model: scriptedModel(script), tools: [deploy], input: 'Deploy api.', id: 'turn-7', ...tracing.hooks }),
    );
    expect(first.status).toBe('suspended');
    const parked = rec.one('invoke_agent deployer');
    expect(parked.ended).toBe(true);
    expect(parked.attributes['turnkit.turn.status']).toBe('suspended');
    const saved = tracing.traceContext();
    expect(saved?.traceparent).toBe(`00-${parked.spanContext().traceId}-${parked.spanContext().spanId}-01`);

    const file = join(mkdtempSync(join(tmpdir(), 'turnkit-otel-')), 'turn.json');
    writeFileSync(file, JSON.stringify({ ...first, traceContext: saved }));
    const { stdout } = await run(process.execPath, [tsx, '--conditions=@turnkit/source', child, file], { timeout: 60_000 });
    const resumed = JSON.parse(stdout) as { status: string; pid: number; spans: ChildSpan[] };
    expect(resumed.status).toBe('stopped');
    expect(resumed.pid).not.toBe(process.pid);

    const agents = resumed.spans.filter((s) => s.name === 'invoke_agent deployer');
    expect(agents).toHaveLength(1);
    const agent = agents[0] as ChildSpan;
    expect(agent.parentSpanId).toBeNull();
    expect(agent.spanId).not.toBe(parked.spanContext().spanId);
    expect(agent.links).toEqual([
      {
        traceId: parked.spanContext().traceId,
        spanId: parked.spanContext().spanId,
        attributes: { 'turnkit.link.reason': 'resumed' },
      },
    ]);
    expect(agent.attributes).toMatchObject({ 'gen_ai.conversation.id': 'turn-7', 'turnkit.turn.status': 'stopped' });
    // The model call after the approval is a child of the resumed span.
    const chats = resumed.spans.filter((s) => s.name === 'chat');
    expect(chats.map((s) => s.parentSpanId)).toEqual([agent.spanId]);
  });

  it('a malformed saved context opens an unlinked span that names the problem, and the turn goes on', async () => {
    const rec = recorder();
    const tracing = traceTurn({ agent: 'deployer', tracer: rec.tracer, link: { traceparent: '00-zz-1-01' } });
    const result = await tracing.run(() =>
      runTurn({ model: scriptedModel(script), tools: [deploy], input: 'Deploy api.', ...tracing.hooks }),
    );
    expect(result.status).toBe('suspended');
    const span = rec.one('invoke_agent deployer');
    expect(span.links).toEqual([]);
    expect(span.attributes['turnkit.trace_link.error']).toBe('traceparent "00-zz-1-01" is not 00-<32 hex>-<16 hex>-<2 hex>');
  });
});

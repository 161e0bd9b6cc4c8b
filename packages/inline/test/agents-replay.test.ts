// A recorded multi-agent turn replays: its trace (the root's events, the child's wrapped in
// `child`) steps through core again with no model or tool, and a changed event is found.
import { describe, expect, it } from 'vitest';
import { runTurn } from '@turnkit/inline';
import { agentScenarios, replay } from '@turnkit/testing';

async function recorded(name: string) {
  const run = agentScenarios.find((s) => s.name === name)?.setup();
  if (run === undefined) throw new Error(`no scenario '${name}'`);
  const result = await runTurn({ ...run.options, trace: true });
  if (result.trace === undefined) throw new Error('no trace');
  return JSON.parse(JSON.stringify(result.trace)) as typeof result.trace;
}

describe('replay of a recorded multi-agent turn', () => {
  it('every step of a delegation and a handoff replays as recorded', async () => {
    const trace = await recorded('delegate, then hand off');
    expect(trace.entries.some((e) => e.event.type === 'child')).toBe(true);
    expect(replay(trace)).toEqual({ ok: true, steps: trace.entries.length });
  });

  it("an edited child reply is found at its step, inside the child's effects", async () => {
    const trace = await recorded('delegate, then hand off');
    const index = trace.entries.findIndex((e) => e.event.type === 'child' && e.event.event.type === 'model_responded');
    const entries = trace.entries.map((entry, i) => {
      if (i !== index || entry.event.type !== 'child') return entry;
      return {
        ...entry,
        event: { ...entry.event, event: { type: 'model_responded' as const, response: { text: 'edited', toolCalls: [] } } },
      };
    });
    const report = replay({ ...trace, entries });
    expect(report.ok).toBe(false);
    expect(report.ok === false && report.difference.index).toBe(index);
  });
});

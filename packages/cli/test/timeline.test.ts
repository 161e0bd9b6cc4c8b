import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '@turnkit/dispatch';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { Timeline } from '../src/timeline.js';

const strip = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

describe('the timeline', () => {
  it('says which hook blocked a call, and why', () => {
    let out = '';
    const timeline = new Timeline({ write: (text) => (out += text), spinner: false, streaming: false, checksOutput: false });
    timeline.onEffect({
      type: 'emit',
      notice: { name: 'hook_blocked', data: { callId: 'call_2', tool: 'deploy', hook: 'freeze', reason: 'Deploys are frozen.' } },
    });
    expect(strip(out)).toBe('hook   ✗ deploy call_2 blocked by hook \'freeze\': "Deploys are frozen."\n');
  });
});

describe('the timeline of a tree of agents', () => {
  it("shows a child turn's task, calls, results and end, each line led by its agent", async () => {
    const search = defineTool({
      name: 'search',
      description: 'Searches.',
      input: z.object({ q: z.string() }),
      readOnly: true,
      execute: () => 'opened in 1932',
    });
    let out = '';
    const timeline = new Timeline({ write: (t) => (out += t), spinner: false, streaming: false, checksOutput: false });
    await runTurn({
      name: 'supervisor',
      model: scriptedModel([toolCalls(call('transfer_task', { agent: 'researcher', task: 'When?' })), text('In 1932.')]),
      delegates: [
        {
          name: 'researcher',
          description: 'Finds facts.',
          model: scriptedModel([toolCalls(call('search', { q: 'bridge' })), text('1932')]),
          tools: [search],
        },
      ],
      input: 'When did it open?',
      onEffect: timeline.onEffect,
      onStep: timeline.onStep,
    });
    const lines = strip(out)
      .split('\n')
      .map((l) => l.replace(/ · [\d.]+ ?m?s$/, ''));
    expect(lines).toEqual([
      'model  call 1 · 1 tool call',
      'tool   → transfer_task call_1 {"agent":"researcher","task":"When?"}',
      'researcher │ task   When?',
      'researcher │ model  call 2 · 1 tool call',
      'researcher │ tool   → search call_1 {"q":"bridge"}',
      'researcher │ tool   ✓ search call_1 → "opened in 1932"',
      'researcher │ model  call 3 · answer',
      'researcher │        1932',
      'researcher │ end    ✔ completed',
      'tool   ✓ transfer_task call_1 → "1932"',
      'model  call 4 · answer',
      '       In 1932.',
      '',
    ]);
  });
});

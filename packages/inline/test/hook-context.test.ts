import { describe, expect, it } from 'vitest';
import type { Notice } from '@turnkit/core';
import { runTurn } from '@turnkit/inline';
import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { add, deploy } from './run-tools.ts';

describe('runTurn: what hooks see, and audit records', () => {
  it('hands hooks the turn id, its context and the transcript; keeps audit records in the trace; says when a hook blocked', async () => {
    const notices: Notice[] = [];
    const seen: string[] = [];
    const result = await runTurn({
      model: scriptedModel([
        toolCalls(call('add', { a: 1, b: 2 }), call('deploy', { service: 'api' })),
        text('Added; deploy blocked.'),
      ]),
      tools: [add, deploy],
      input: 'add, then deploy',
      id: 'turn-h',
      context: { userId: 'u-1', cwd: '/srv/app' },
      trace: true,
      hooks: {
        before: [
          {
            name: 'freeze',
            run: ({ call: c, turnId, context, transcript }) => {
              seen.push(`${turnId} ${String(context['userId'])} ${transcript.length} ${c.name}`);
              return c.name === 'deploy' ? { kind: 'halt', output: 'Deploys are frozen today.' } : undefined;
            },
          },
        ],
      },
      onNotice: (n) => notices.push(n),
    });
    expect(result.text).toBe('Added; deploy blocked.');
    // The transcript so far: the user's message and the assistant's tool calls.
    expect(seen).toEqual(['turn-h u-1 2 add', 'turn-h u-1 2 deploy']);
    expect(notices.filter((n) => n.name === 'hook_blocked')).toEqual([
      { name: 'hook_blocked', data: { callId: 'call_2', tool: 'deploy', hook: 'freeze', reason: 'Deploys are frozen today.' } },
    ]);
    const completed = result.trace?.entries.find((e) => e.event.type === 'tools_completed')?.event;
    // In the order the results were known: the denial at once, the tool when it had run.
    expect(completed).toMatchObject({
      records: [
        {
          turnId: 'turn-h',
          callId: 'call_2',
          tool: 'deploy',
          decision: 'deny',
          source: 'hook:freeze',
          outcome: 'denied',
          attempts: 0,
        },
        {
          turnId: 'turn-h',
          callId: 'call_1',
          tool: 'add',
          decision: 'allow',
          outcome: 'ok',
          attempts: 1,
          context: { userId: 'u-1', cwd: '/srv/app' },
        },
      ],
    });
    await expect(runTurn({ model: scriptedModel([]), input: 'x', context: ['u-1'] as never })).rejects.toThrow(
      'runTurn option `context` must be a JSON object, like { sessionId, userId, cwd }.',
    );
  });
});

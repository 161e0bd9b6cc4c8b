import { EventEmitter } from 'node:events';
import type { ParkedCall } from '@turnkit/core';
import { describe, expect, it } from 'vitest';
import { ApprovalQuit, promptApprover, type ApprovalPrompts } from '../src/approve.ts';

const pending: ParkedCall[] = [
  { call: { id: 'call_2', name: 'delete_file', input: { path: 'a' } }, reason: 'needs approval' },
  { call: { id: 'call_3', name: 'delete_file', input: { path: 'b' } } },
];

/** inquirer's errors, matched by name as @inquirer/core defines them. */
class ExitPromptError extends Error {
  override name = 'ExitPromptError';
}
class AbortPromptError extends Error {
  override name = 'AbortPromptError';
}

function approverWith(select: ApprovalPrompts['select'], stdin = new EventEmitter()) {
  const controller = new AbortController();
  const approve = promptApprover({
    beforePrompt: () => undefined,
    cancel: (reason) => controller.abort(reason),
    prompts: { select, input: () => Promise.resolve('not needed') },
    stdin: stdin as unknown as NodeJS.ReadableStream,
  });
  return { approve, controller };
}

describe('promptApprover', () => {
  it('turns the answers into decisions; "approve always" covers the next call of the same tool', async () => {
    const asked: string[] = [];
    const { approve, controller } = approverWith(({ message }) => {
      asked.push(message);
      return Promise.resolve('always');
    });
    await expect(approve(pending, { turnId: 't' })).resolves.toEqual({
      call_2: { type: 'approve', remember: 'tool' },
      call_3: { type: 'approve', remember: 'tool' },
    });
    expect(asked).toHaveLength(1);
    expect(controller.signal.aborted).toBe(false);
  });

  it('Ctrl+C at the prompt (ExitPromptError) cancels the turn instead of rejecting the calls', async () => {
    const { approve, controller } = approverWith(() =>
      Promise.reject(new ExitPromptError('User force closed the prompt with SIGINT')),
    );
    await expect(approve(pending, { turnId: 't' })).rejects.toBeInstanceOf(ApprovalQuit);
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBe('interrupted with Ctrl+C at the approval prompt');
  });

  it('inquirer closing the prompt at exit (stdin ended) cancels the turn too', async () => {
    const { approve, controller } = approverWith(() =>
      Promise.reject(new ExitPromptError('User force closed the prompt with 0 null')),
    );
    await expect(approve(pending, { turnId: 't' })).rejects.toBeInstanceOf(ApprovalQuit);
    expect(controller.signal.reason).toBe('the approval prompt was closed (stdin ended) before a decision');
  });

  it('stdin ending while the prompt waits aborts the prompt and cancels the turn', async () => {
    const stdin = new EventEmitter();
    const { approve, controller } = approverWith(
      (_config, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new AbortPromptError('Prompt was aborted'))),
        ),
      stdin,
    );
    const answer = approve(pending, { turnId: 't' });
    stdin.emit('end');
    await expect(answer).rejects.toBeInstanceOf(ApprovalQuit);
    expect(controller.signal.reason).toBe('the approval prompt was closed (stdin ended) before a decision');
    expect(stdin.listenerCount('end') + stdin.listenerCount('close')).toBe(0);
  });

  it('any other error is not a quit: it propagates and the turn is not cancelled', async () => {
    const { approve, controller } = approverWith(() => Promise.reject(new AbortPromptError('Prompt was aborted')));
    await expect(approve(pending, { turnId: 't' })).rejects.toThrow('Prompt was aborted');
    expect(controller.signal.aborted).toBe(false);
  });
});

describe('promptApprover and what the model chose', () => {
  it('decides a call whose id is __proto__ (an own key of the decisions, not the prototype)', async () => {
    const { approve } = approverWith(() => Promise.resolve('approve'));
    const decisions = (await approve([{ call: { id: '__proto__', name: 'delete_file', input: {} } }], { turnId: 't' })) as Record<
      string,
      unknown
    >;
    expect(Object.hasOwn(decisions, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(decisions)).toBe(Object.prototype);
    expect(Object.entries(decisions)).toEqual([['__proto__', { type: 'approve' }]]);
  });

  it('prints control characters of the name, id, input and reason escaped in the prompt', async () => {
    const asked: string[] = [];
    const { approve } = approverWith(({ message, choices }) => {
      asked.push(message, ...choices.map((c) => c.name));
      return Promise.resolve('approve');
    });
    const evil = 'x\u001b[2K\r\u009b1;1H\u007fy';
    await approve([{ call: { id: `call_${evil}`, name: `rm${evil}`, input: { path: evil } }, reason: `because${evil}` }], {
      turnId: 't',
    });
    // picocolors colours the prompt when CI is set; its own SGR codes are not text from the model.
    const plain = asked.map((line) => line.replace(/\u001b\[[0-9;]*m/g, ''));
    const shown = plain.join('\n');
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(plain[0]).toBe(
      'rmx\\x1b[2K\\r\\x9b1;1H\\x7fy call_x\\x1b[2K\\r\\x9b1;1H\\x7fy {"path":"x\\u001b[2K\\r\\x9b1;1H\\x7fy"} (becausex\\x1b[2K\\r\\x9b1;1H\\x7fy): allow it?',
    );
  });
});

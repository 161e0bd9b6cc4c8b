import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runTurn } from '@turnkit/inline';
import { scriptedModel, text, transcriptLines } from '@turnkit/testing';

describe('runTurn: structured output and its check', () => {
  it('accepts JSON in a ```json fence and names the failing path of a schema', async () => {
    const schema = z.object({ items: z.array(z.object({ name: z.string() })) });
    const model = scriptedModel([text('{"items": [{"name": 1}]}'), text('```json\n{"items": [{"name": "a"}]}\n```')]);
    const result = await runTurn({ model, input: 'list', output: schema });
    expect(result.status).toBe('stopped');
    expect(result.output).toEqual({ items: [{ name: 'a' }] });
    const repair = result.transcript[2];
    expect(repair?.role).toBe('user');
    expect(repair?.role === 'user' ? repair.content : '').toContain('at items[0].name:');
  });

  it('sends a check rejection back to the model and uses its accepted output', async () => {
    const model = scriptedModel([text('maybe'), text('yes')]);
    const result = await runTurn({
      model,
      input: 'yes or no?',
      check: (candidate) =>
        candidate === 'yes' || candidate === 'no'
          ? { ok: true, output: candidate === 'yes' }
          : { ok: false, reason: 'Answer yes or no.' },
    });
    expect(result.output).toBe(true);
    expect(transcriptLines(result.transcript)).toEqual([
      'user: yes or no?',
      'assistant: maybe',
      'user: Answer yes or no.',
      'assistant: yes',
    ]);
  });

  it('fails the turn naming check when the check throws or answers garbage', async () => {
    const thrown = await runTurn({
      model: scriptedModel([text('x')]),
      input: 'hi',
      check: () => {
        throw new Error('db down');
      },
    });
    expect(thrown.status).toBe('failed');
    expect(thrown.error?.kind).toBe('check_failed');
    expect(thrown.error?.message).toContain('check function threw: db down');
    expect(thrown.state.status).toBe('failed');
    const garbage = await runTurn({ model: scriptedModel([text('x')]), input: 'hi', check: () => 'fine' as never });
    expect(garbage.error?.kind).toBe('check_failed');
    expect(garbage.error?.message).toContain('"fine"');
  });
});

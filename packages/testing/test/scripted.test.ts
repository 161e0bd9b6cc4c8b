import { describe, expect, it } from 'vitest';
import type { ModelRequest, ModelStreamPart } from '@turnkit/core';
import { call, fail, scriptedModel, text, toolCalls } from '@turnkit/testing';
import { splitText } from '../src/scripted.ts';

const request = (iteration = 1): ModelRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  toolChoice: 'auto',
  iteration,
});
const signal = new AbortController().signal;

describe('scriptedModel', () => {
  it('numbers tool calls call_1, call_2, … across steps, unless an id is given', async () => {
    const model = scriptedModel([toolCalls(call('a'), call('b', { x: 1 })), toolCalls(call('c', {}, { id: 'mine' }), call('d'))]);
    const first = await model.generate(request(), { signal });
    const second = await model.generate(request(2), { signal });
    expect(first.toolCalls.map((c) => c.id)).toEqual(['call_1', 'call_2']);
    expect(first.toolCalls[1]).toEqual({ id: 'call_2', name: 'b', input: { x: 1 } });
    expect(second.toolCalls.map((c) => c.id)).toEqual(['mine', 'call_3']);
    expect(first.finishReason).toBe('tool-calls');
  });

  it('gives the same ids on every run of the same script', async () => {
    const ids = async () =>
      (await scriptedModel([toolCalls(call('a'), call('b'))]).generate(request(), { signal })).toolCalls.map((c) => c.id);
    expect(await ids()).toEqual(await ids());
  });

  it('carries text, usage, reasoning and invalid arguments', async () => {
    const model = scriptedModel([
      toolCalls(call('a', '{"x":', { inputError: 'bad JSON' }), {
        text: 'thinking aloud',
        usage: { inputTokens: 3 },
        reasoning: 'why',
      }),
      text('done', { modelId: 'm1' }),
    ]);
    const first = await model.generate(request(), { signal });
    expect(first).toMatchObject({
      text: 'thinking aloud',
      usage: { inputTokens: 3 },
      reasoning: 'why',
      toolCalls: [{ id: 'call_1', input: '{"x":', inputError: 'bad JSON' }],
    });
    expect(await model.generate(request(), { signal })).toEqual({
      text: 'done',
      toolCalls: [],
      modelId: 'm1',
      finishReason: 'stop',
    });
  });

  it('records every request with the messages as they were', async () => {
    const model = scriptedModel([text('1'), text('2')]);
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await model.generate({ ...request(), messages }, { signal });
    messages.push({ role: 'user', content: 'later' });
    await model.generate({ ...request(2), messages }, { signal });
    expect(model.calls.map((c) => c.messages.length)).toEqual([1, 2]);
    expect(model.calls[1]?.iteration).toBe(2);
  });

  it('answers a function step from the request', async () => {
    const model = scriptedModel([
      (req, { step }) => text(`step ${step} saw ${req.messages.length} message`),
      () => ({ text: 'raw', toolCalls: [] }),
    ]);
    expect((await model.generate(request(), { signal })).text).toBe('step 1 saw 1 message');
    expect((await model.generate(request(), { signal })).text).toBe('raw');
  });

  it('throws the error of a fail step as given', async () => {
    const error = Object.assign(new Error('overloaded'), { retryable: true });
    const model = scriptedModel([fail(error), fail('plain')]);
    await expect(model.generate(request(), { signal })).rejects.toBe(error);
    await expect(model.generate(request(), { signal })).rejects.toThrow('plain');
  });

  it('names the missing step when the turn runs past the script', async () => {
    const model = scriptedModel([text('only')]);
    await model.generate(request(), { signal });
    await expect(model.generate(request(), { signal })).rejects.toThrow(/asked for step 2, but the script has only 1 step/);
  });

  it('assertDone names the unused steps', async () => {
    const model = scriptedModel([text('1'), text('2'), text('3')]);
    await model.generate(request(), { signal });
    expect(() => model.assertDone()).toThrow('2 of 3 steps were not used (steps 2–3)');
    await model.generate(request(), { signal });
    expect(() => model.assertDone()).toThrow('(step 3)');
    await model.generate(request(), { signal });
    expect(() => model.assertDone()).not.toThrow();
  });

  describe('startAt: continuing a script after a suspended turn', () => {
    const script = () => [toolCalls(call('a'), call('b')), toolCalls(call('c', {}, { id: 'mine' }), call('d')), text('done')];

    it('answers the first call with step startAt + 1, with call ids going on from the skipped steps', async () => {
      const whole = scriptedModel(script());
      await whole.generate(request(), { signal });
      const fromWhole = await whole.generate(request(2), { signal });
      const resumed = scriptedModel(script(), { startAt: 1 });
      const fromResumed = await resumed.generate(request(2), { signal });
      expect(fromResumed).toEqual(fromWhole);
      expect(fromResumed.toolCalls.map((c) => c.id)).toEqual(['mine', 'call_3']);
      expect((await resumed.generate(request(3), { signal })).text).toBe('done');
      expect(resumed.calls).toHaveLength(2);
      expect(() => resumed.assertDone()).not.toThrow();
    });

    it('counts the skipped steps in step numbers and in assertDone', async () => {
      const model = scriptedModel([text('1'), (_req, { step }) => text(`step ${step}`), text('3')], { startAt: 1 });
      expect((await model.generate(request(), { signal })).text).toBe('step 2');
      expect(() => model.assertDone()).toThrow('1 of 3 steps were not used (step 3)');
      await model.generate(request(), { signal });
      await expect(model.generate(request(), { signal })).rejects.toThrow(/asked for step 4, but the script has only 3 steps/);
    });

    it('startAt equal to the script length leaves nothing to answer; 0 is the default', async () => {
      const used = scriptedModel([text('1')], { startAt: 1 });
      expect(() => used.assertDone()).not.toThrow();
      await expect(used.generate(request(), { signal })).rejects.toThrow(/asked for step 2/);
      expect((await scriptedModel([text('1')], { startAt: 0 }).generate(request(), { signal })).text).toBe('1');
    });

    it('rejects a startAt that is not a step index, naming the value and the range', () => {
      expect(() => scriptedModel(script(), { startAt: 4 })).toThrow(
        'scriptedModel option startAt must be a whole number from 0 to 3 (the script has 3 steps), got 4.',
      );
      expect(() => scriptedModel(script(), { startAt: -1 })).toThrow(/from 0 to 3 .* got -1\. Pass the usage\.modelCalls/);
      expect(() => scriptedModel(script(), { startAt: 1.5 })).toThrow(/got 1\.5/);
      expect(() => scriptedModel(script(), { startAt: '1' as unknown as number })).toThrow(/got "1"/);
      expect(() => scriptedModel(script(), { start: 1 } as never)).toThrow(
        "scriptedModel got an unknown option 'start'. Known options: startAt.",
      );
    });
  });

  it('refuses to answer once the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort('stop');
    await expect(scriptedModel([text('x')]).generate(request(), { signal: controller.signal })).rejects.toThrow('stop');
  });

  it('streams text as deltas and tool calls as start, deltas and end, then finish', async () => {
    const model = scriptedModel([
      toolCalls(call('add', { a: 1, b: 2 }), { text: 'Let me add that.', usage: { outputTokens: 7 } }),
    ]);
    const parts: ModelStreamPart[] = [];
    for await (const part of model.stream(request(), { signal })) parts.push(part);
    const deltas = parts.filter((p) => p.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((p) => p.text).join('')).toBe('Let me add that.');
    const toolParts = parts.filter((p) => p.type.startsWith('tool_call'));
    expect(toolParts[0]).toEqual({ type: 'tool_call_start', id: 'call_1', name: 'add' });
    expect(toolParts.at(-1)).toEqual({ type: 'tool_call_end', id: 'call_1' });
    const args = toolParts.flatMap((p) => (p.type === 'tool_call_delta' ? [p.argsText] : [])).join('');
    expect(JSON.parse(args)).toEqual({ a: 1, b: 2 });
    expect(parts.at(-1)).toEqual({ type: 'finish', usage: { outputTokens: 7 }, finishReason: 'tool-calls' });
    expect(model.calls).toHaveLength(1);
  });

  it('splitText keeps every character', () => {
    expect(splitText('  a  b\nc ').join('')).toBe('  a  b\nc ');
    expect(splitText('')).toEqual([]);
  });
});

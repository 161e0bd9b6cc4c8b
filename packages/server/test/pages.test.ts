import { toMermaid, turnSpec } from '@turnkit/check';
import { createTurn } from '@turnkit/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diagramState } from '../src/console/diagram.js';
import { timelineItem, transcriptView } from '../src/console/parts.js';
import { escapeHtml, html } from '../src/html.js';
import { STATUSES } from '../src/schemas.js';
import { turnDiagram } from '../src/console/diagram.js';

describe('pages escape everything from a turn', () => {
  it('html`` escapes any interpolated string (fast-check)', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const out = html`<p title="${value}">${value}</p>`.value;
        const inner = out.slice('<p title="'.length, -'</p>'.length);
        return !/[<>]/.test(inner.replace('">', '')) && out === `<p title="${escapeHtml(value)}">${escapeHtml(value)}</p>`;
      }),
      { numRuns: 300 },
    );
  });

  it('a model reply, tool input and output full of markup stay text', () => {
    const evil = '<img src=x onerror=alert(1)>';
    const item = timelineItem({
      type: 'message',
      seq: 1,
      message: { role: 'assistant', content: evil, toolCalls: [{ id: evil, name: evil, input: { x: evil } }] },
    }).value;
    const transcript = transcriptView(
      [{ role: 'tool', result: { callId: evil, name: evil, output: evil, isError: true } }],
      'stopped',
    ).value;
    for (const out of [item, transcript]) {
      expect(out).not.toContain('<img');
      expect(out).toContain('&lt;img');
    }
  });
});

describe('an empty transcript', () => {
  it('says what the status says: not taken (ready), ended before its first message (failed), not written yet (running)', () => {
    expect(transcriptView([], 'ready').value).toContain('Nothing yet: a worker has not taken this turn.');
    // A worker took a turn of an agent it does not have and failed it: it was taken.
    const failed = transcriptView([], 'failed').value;
    expect(failed).toContain('No messages: the turn ended (failed) before its first one; its outcome says why.');
    expect(failed).not.toContain('has not taken');
    expect(transcriptView([], 'calling_model').value).toContain('the worker that holds this turn has not written');
  });
});

describe('the turn machine diagram', () => {
  it('is drawn from the Mermaid text @turnkit/check generates, with every state, and fetches nothing', () => {
    const diagram = turnDiagram();
    expect(diagram.mermaid).toBe(toMermaid(turnSpec));
    for (const status of STATUSES) {
      const node = status === 'calling_model' || status === 'finalizing' ? diagramState(null, status) : status;
      expect(diagram.states, status).toContain(node);
      expect(diagram.css).toContain(`.diagram[data-current="${node}"] [data-id="${node}"]`);
    }
    expect(diagram.svg).toMatch(/^<svg /);
    expect(diagram.svg).not.toMatch(/<style|<script|@import|href=|https?:\/\/(?!www\.w3\.org)/);
    expect(diagram.css).not.toMatch(/@import|url\(/);
  });

  it('highlights the sub-state of a compound status', () => {
    const state = createTurn({ id: 't' });
    expect(diagramState(state, 'calling_model')).toBe('calling_model__tools_allowed');
    expect(diagramState({ ...state, forced: 'max_iterations' }, 'calling_model')).toBe('calling_model__final_only');
    expect(diagramState({ ...state, forced: 'loop_detected' }, 'finalizing')).toBe('finalizing__forced');
    expect(diagramState(state, 'awaiting_approval')).toBe('awaiting_approval');
  });
});

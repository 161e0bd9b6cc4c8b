import { describe, expect, it } from 'vitest';
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

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(path, import.meta.url), 'utf8').trim();

describe('docs/testing-agents.md', () => {
  const doc = read('../../../docs/testing-agents.md');

  it('shows the deterministic test exactly as it runs in test/agent-example.test.ts', () => {
    expect(doc).toContain(read('./agent-example.test.ts'));
  });

  it('shows the replay example exactly as it runs in test/replay-example.test.ts', () => {
    expect(doc).toContain(read('./replay-example.test.ts'));
  });
});

describe('docs/tools.md', () => {
  it('shows the tool selection example exactly as it runs in test/select-tools-example.test.ts', () => {
    expect(read('../../../docs/tools.md')).toContain(read('./select-tools-example.test.ts'));
  });
});

describe('docs/getting-started.md', () => {
  it('shows the agent example exactly as it runs in test/agent-server-example.test.ts', () => {
    expect(read('../../../docs/getting-started.md')).toContain(read('./agent-server-example.test.ts'));
  });
});

// Stage 5 on its own: the pure precedence `decide`, and `gatherFacts`, which runs user code only
// when no earlier rule has an opinion.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/define.js';
import { GrantList } from '../../src/grants.js';
import { decide } from '../../src/index.js';
import type { DecideInput } from '../../src/stages/policy.js';
import { parsePattern } from '../../src/patterns.js';
import { CANCELLED } from '../../src/abort.js';
import { gatherFacts, needsApprovalFact, policyFact, type PolicyContext } from '../../src/stages/policy.js';
import type { CallInfo, Policy } from '../../src/types.js';

const base: DecideInput = { tool: 'shell', readOnly: false, nonInteractive: false };
const all: DecideInput = {
  ...base,
  denyRule: 'shell:cmd=rm*',
  grant: { scope: 'session' },
  allowRule: 'shell:cmd=ls*',
  askRule: 'shell',
  policy: { kind: 'deny', reason: 'policy says no' },
  needsApproval: { kind: 'always' },
};

describe('decide', () => {
  it('lets the first row that applies decide, in the documented order', () => {
    const order: (keyof DecideInput)[] = ['denyRule', 'grant', 'allowRule', 'policy', 'askRule', 'needsApproval'];
    const sources = order.map((_, i) => {
      const facts = { ...all, policy: { kind: 'ask', reason: 'policy asks' } } as DecideInput;
      for (const key of order.slice(0, i)) delete (facts as unknown as Record<string, unknown>)[key];
      return decide(facts).source;
    });
    expect(sources).toEqual([
      'rule:deny:shell:cmd=rm*',
      'grant:session',
      'rule:allow:shell:cmd=ls*',
      'rule:ask:shell',
      'rule:ask:shell',
      'needs_approval',
    ]);
    // A policy deny beats an ask rule and needsApproval (any deny wins over an ask).
    expect(decide({ ...base, askRule: 'shell', policy: { kind: 'deny', reason: 'no' } }).source).toBe('policy');
  });

  it('asks by default; a read-only tool is allowed; defaultDecision allow allows', () => {
    expect(decide(base)).toEqual({
      decision: 'ask',
      source: 'default',
      reason: "no rule allows tool 'shell', and it is not read-only",
    });
    expect(decide({ ...base, readOnly: true })).toEqual({ decision: 'allow', source: 'readonly', reason: 'read-only tool' });
    expect(decide({ ...base, defaultDecision: 'allow' })).toEqual({
      decision: 'allow',
      source: 'default',
      reason: 'no rule applied',
    });
  });

  it('names the permission set a rule came from', () => {
    expect(decide({ ...base, set: 'team', denyRule: 'shell' })).toEqual({
      decision: 'deny',
      source: 'set:team:deny:shell',
      reason: "denied by rule 'shell' of permission set 'team'",
    });
  });

  it('yolo turns every ask into an allow, and leaves denials alone', () => {
    expect(decide({ ...base, yolo: true })).toMatchObject({ decision: 'allow', source: 'yolo' });
    expect(decide({ ...base, yolo: true, nonInteractive: true })).toMatchObject({ decision: 'allow', source: 'yolo' });
    expect(decide({ ...base, yolo: true, denyRule: 'shell' })).toMatchObject({ decision: 'deny', source: 'rule:deny:shell' });
  });

  it("a hook's pre-approval allows what would ask, but not what a deny or the policy's deny stops", () => {
    expect(decide({ ...base, hookApproval: 'ci', askRule: 'shell' })).toMatchObject({
      decision: 'allow',
      source: 'hook:ci:approved',
    });
    expect(decide({ ...base, hookApproval: 'ci', denyRule: 'shell' }).decision).toBe('deny');
    expect(decide({ ...base, hookApproval: 'ci', policy: { kind: 'deny', reason: 'no' } }).decision).toBe('deny');
  });

  it('names the grant that allowed the call', () => {
    expect(decide({ ...base, grant: { scope: 'tool', tool: 'shell' } })).toMatchObject({
      decision: 'allow',
      source: 'grant:tool:shell',
    });
    expect(decide({ ...base, grant: { scope: 'tool', pattern: 'shell:cmd=git *' } })).toMatchObject({
      decision: 'allow',
      source: 'grant:pattern:shell:cmd=git *',
    });
  });

  it("gives the policy's own verdicts and reasons, and denies on a policy error", () => {
    expect(decide({ ...base, policy: { kind: 'allow' } })).toEqual({
      decision: 'allow',
      source: 'policy',
      reason: 'allowed by policy',
    });
    expect(decide({ ...base, policy: { kind: 'ask', reason: 'costly' } })).toEqual({
      decision: 'ask',
      source: 'policy',
      reason: 'costly',
    });
    expect(decide({ ...base, policy: { kind: 'error', reason: 'it broke' } })).toEqual({
      decision: 'deny',
      source: 'policy_error',
      reason: 'it broke',
    });
  });

  it('asks for needsApproval, and denies when needsApproval failed', () => {
    expect(decide({ ...base, needsApproval: { kind: 'for_input' } }).reason).toBe("tool 'shell' needs approval for this input");
    expect(decide({ ...base, needsApproval: { kind: 'error', reason: 'boom' } })).toEqual({
      decision: 'deny',
      source: 'needs_approval_error',
      reason: 'boom',
    });
  });

  it('turns every ask into a non_interactive denial when no one can approve, and leaves allow and deny alone', () => {
    const asks: DecideInput[] = [
      { ...base, askRule: 'shell' },
      { ...base, policy: { kind: 'ask', reason: 'costly' } },
      { ...base, needsApproval: { kind: 'always' } },
    ];
    for (const facts of asks) {
      const { decision, source, reason } = decide({ ...facts, nonInteractive: true });
      expect({ decision, source }).toEqual({ decision: 'deny', source: 'non_interactive' });
      expect(reason).toBe(
        `it needs approval (${decide(facts).reason}), but no one can approve calls in this non-interactive run`,
      );
    }
    expect(decide({ ...all, nonInteractive: true }).source).toBe('rule:deny:shell:cmd=rm*');
    expect(decide({ ...base, nonInteractive: true }).source).toBe('non_interactive');
    expect(decide({ ...base, nonInteractive: true, defaultDecision: 'allow' }).source).toBe('default');
  });
});

const shell = defineTool({ name: 'shell', description: 'Runs.', input: z.object({ cmd: z.string() }), execute: () => 'ran' });

function context(options: {
  deny?: string[];
  allow?: string[];
  ask?: string[];
  policy?: Policy;
  grants?: GrantList;
  cancel?: AbortController;
  tool?: typeof shell;
}): PolicyContext {
  const tool = options.tool ?? shell;
  const subject = { call: { id: 'c1', name: tool.name, input: { cmd: 'ls' } }, tool, input: { cmd: 'ls' } };
  const cancel = options.cancel ?? new AbortController();
  const patterns = (list: string[] = []) => list.map((p) => parsePattern(p));
  const grants = options.grants ?? new GrantList();
  return {
    config: {
      permissionSets: [{ deny: patterns(options.deny), allow: patterns(options.allow), ask: patterns(options.ask) }],
      policy: options.policy,
      nonInteractive: false,
      defaultDecision: 'ask',
      yolo: false,
    },
    grant: (name, input) => grants.match(name, input),
    subject,
    info: () => ({ ...subject, turnId: 't', signal: cancel.signal, context: {}, transcript: [] }) as CallInfo,
    signal: cancel.signal,
  };
}

describe('gatherFacts', () => {
  it('does not run the policy function when a rule that settles the call alone matched', async () => {
    let ran = 0;
    const policy: Policy = () => {
      ran++;
      return { kind: 'deny', reason: 'no' };
    };
    const grants = new GrantList();
    grants.add({ scope: 'session' });
    expect(await gatherFacts(context({ deny: ['shell'], policy }))).toMatchObject({ denyRule: 'shell' });
    expect(await gatherFacts(context({ grants, policy }))).toMatchObject({ grant: { scope: 'session' } });
    expect(await gatherFacts(context({ allow: ['shell:cmd=ls'], policy }))).toMatchObject({ allowRule: 'shell:cmd=ls' });
    expect(ran).toBe(0);
    // An ask rule does not settle it: the policy's deny would still win.
    expect(await gatherFacts(context({ ask: ['shell'], policy }))).toMatchObject({ askRule: 'shell', policy: { kind: 'deny' } });
    expect(ran).toBe(1);
  });

  it('does not call needsApproval when the policy denied, and gives only the facts found', async () => {
    let asked = 0;
    const tool = defineTool({
      name: 'shell',
      description: 'Runs.',
      input: z.object({ cmd: z.string() }),
      execute: () => 'ran',
      needsApproval: () => (asked++, true),
    });
    const facts = await gatherFacts(context({ tool, policy: () => ({ kind: 'deny', reason: 'no' }) }));
    expect(facts).toEqual({
      tool: 'shell',
      readOnly: false,
      nonInteractive: false,
      defaultDecision: 'ask',
      yolo: false,
      policy: { kind: 'deny', reason: 'no' },
    });
    expect(asked).toBe(0);
    expect(await gatherFacts(context({ tool, policy: () => undefined }))).toMatchObject({ needsApproval: { kind: 'for_input' } });
    expect(asked).toBe(1);
  });

  it('gives CANCELLED when the turn is cancelled while the policy runs', async () => {
    const cancel = new AbortController();
    const facts = gatherFacts(context({ cancel, policy: () => new Promise(() => {}) }));
    cancel.abort('stop');
    expect(await facts).toBe(CANCELLED);
  });
});

describe('policyFact and needsApprovalFact', () => {
  const info = {} as CallInfo;
  const cancel = new AbortController().signal;

  it('turns a throwing or unrecognised policy into an error fact, and no opinion into undefined', async () => {
    expect(await policyFact(() => undefined, info, cancel)).toBeUndefined();
    expect(
      await policyFact(
        () => {
          throw new Error('db down');
        },
        info,
        cancel,
      ),
    ).toEqual({ kind: 'error', reason: 'the policy check failed (db down)' });
    for (const bad of [null, 5, { kind: 'deny' }, { kind: 'maybe', reason: 'x' }]) {
      expect(await policyFact(() => bad as never, info, cancel)).toEqual({
        kind: 'error',
        reason: 'the policy returned an unrecognised verdict',
      });
    }
  });

  it('reads needsApproval as always, for this input, not needed, or an error', () => {
    const subject = (needsApproval: unknown) => ({
      call: { id: 'c', name: 'shell', input: {} },
      tool: { ...shell, needsApproval } as typeof shell,
      input: {},
    });
    expect(needsApprovalFact(subject(true))).toEqual({ kind: 'always' });
    expect(needsApprovalFact(subject(false))).toBeUndefined();
    expect(needsApprovalFact(subject(() => false))).toBeUndefined();
    expect(needsApprovalFact(subject(() => true))).toEqual({ kind: 'for_input' });
    expect(needsApprovalFact(subject(() => 'yes'))).toEqual({
      kind: 'error',
      reason: 'its needsApproval check did not return a boolean',
    });
    expect(
      needsApprovalFact(
        subject(() => {
          throw new Error('bad');
        }),
      ),
    ).toEqual({ kind: 'error', reason: 'its needsApproval check failed (bad)' });
  });
});

describe('the decide sample in docs/reference/dispatcher.md', () => {
  it('runs and gives the result its comment shows', () => {
    const docs = readFileSync(new URL('../../../../docs/reference/dispatcher.md', import.meta.url), 'utf8');
    const sample = /```ts\n(decide\(.*\);)\n\/\/ (.*)\n```/.exec(docs);
    expect(sample).not.toBeNull();
    const [, code = '', shown = ''] = sample ?? [];
    expect(new Function('decide', `return ${code}`)(decide)).toEqual(new Function(`return (${shown});`)());
  });
});

// Pipeline stage 5: policy. Two halves, so the precedence can be read and tested on its own:
// - `gatherFacts` evaluates an ordered list of rules (permission patterns, grants, the policy
//   function, the tool's needsApproval) and stops at the first that has an opinion, so user code
//   runs only when no earlier rule decided. It is the only half that runs user code.
// - `decide` is pure: it turns those facts into allow, deny or ask.

import type { Cancellation } from '../cancellation.js';
import type { DispatcherConfig } from '../config.js';
import type { GrantList } from '../grants.js';
import { matchesPattern, type Pattern } from '../patterns.js';
import { CANCELLED, raceUserCode } from '../race.js';
import { errorMessage } from '../text.js';
import type { CallInfo, Grant, Policy } from '../types.js';
import type { Subject } from './hooks.js';

/** What the policy function said, checked; `undefined` in `DecideInput` when it had no opinion. */
export type PolicyFact =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'ask'; readonly reason: string }
  /** It threw, or answered something that is not a verdict. */
  | { readonly kind: 'error'; readonly reason: string };

/** What the tool's `needsApproval` said; `undefined` in `DecideInput` when approval is not needed. */
export type NeedsApprovalFact =
  /** `needsApproval: true`. */
  | { readonly kind: 'always' }
  /** `needsApproval(input)` returned true. */
  | { readonly kind: 'for_input' }
  /** `needsApproval(input)` threw or did not return a boolean. */
  | { readonly kind: 'error'; readonly reason: string };

/** The facts `decide` decides on. Plain data: no functions, no I/O. */
export interface DecideInput {
  /** The tool's name, for the reasons. */
  readonly tool: string;
  /** The source text of the first `permissions.deny` pattern that matches the call. */
  readonly denyRule?: string | undefined;
  /** The first remembered grant that covers the call. */
  readonly grant?: Grant | undefined;
  /** The source text of the first `permissions.allow` pattern that matches. */
  readonly allowRule?: string | undefined;
  /** The source text of the first `permissions.ask` pattern that matches. */
  readonly askRule?: string | undefined;
  /** The policy function's verdict; absent without a policy or when it had no opinion. */
  readonly policy?: PolicyFact | undefined;
  /** The tool's needsApproval; absent when approval is not needed. */
  readonly needsApproval?: NeedsApprovalFact | undefined;
  /** The tool is defined `readOnly` (changes only the source of a default allow). */
  readonly readOnly: boolean;
  /** No one can approve: an ask becomes a denial. */
  readonly nonInteractive: boolean;
}

/** The policy stage's answer. */
export interface DecideOutput {
  readonly decision: 'allow' | 'deny' | 'ask';
  /** The decision record's source: `rule:deny:<pattern>`, `grant:session`, `policy`, `non_interactive`, … */
  readonly source: string;
  /** Why, in words, for the model's text (deny) or the parked call (ask). */
  readonly reason: string;
}

function grantDecision(grant: Grant): DecideOutput {
  if (grant.scope === 'session') return { decision: 'allow', source: 'grant:session', reason: 'approved for the session' };
  if ('tool' in grant)
    return { decision: 'allow', source: `grant:tool:${grant.tool}`, reason: `approved for tool '${grant.tool}'` };
  return { decision: 'allow', source: `grant:pattern:${grant.pattern}`, reason: `approved for '${grant.pattern}'` };
}

/** The first fact present, in precedence order (before `nonInteractive`). */
function firstMatch(input: DecideInput): DecideOutput {
  const { denyRule, grant, allowRule, askRule, policy, needsApproval, tool } = input;
  if (denyRule !== undefined)
    return { decision: 'deny', source: `rule:deny:${denyRule}`, reason: `denied by rule '${denyRule}'` };
  if (grant !== undefined) return grantDecision(grant);
  if (allowRule !== undefined)
    return { decision: 'allow', source: `rule:allow:${allowRule}`, reason: `allowed by rule '${allowRule}'` };
  if (askRule !== undefined) return { decision: 'ask', source: `rule:ask:${askRule}`, reason: `matches ask rule '${askRule}'` };
  if (policy !== undefined) {
    if (policy.kind === 'error') return { decision: 'deny', source: 'policy_error', reason: policy.reason };
    return { decision: policy.kind, source: 'policy', reason: policy.kind === 'allow' ? 'allowed by policy' : policy.reason };
  }
  if (needsApproval?.kind === 'always')
    return { decision: 'ask', source: 'needs_approval', reason: `tool '${tool}' needs approval` };
  if (needsApproval?.kind === 'for_input')
    return { decision: 'ask', source: 'needs_approval', reason: `tool '${tool}' needs approval for this input` };
  if (needsApproval?.kind === 'error') return { decision: 'deny', source: 'needs_approval_error', reason: needsApproval.reason };
  return input.readOnly
    ? { decision: 'allow', source: 'readonly', reason: 'read-only tool' }
    : { decision: 'allow', source: 'default', reason: 'no rule applied' };
}

/**
 * The policy precedence, a pure function of the facts. The first fact present decides:
 *
 * 1. `denyRule` → deny (`rule:deny:<pattern>`). A deny always wins, even over grants.
 * 2. `grant` → allow (`grant:session`, `grant:tool:<tool>`, `grant:pattern:<pattern>`).
 * 3. `allowRule` → allow (`rule:allow:<pattern>`).
 * 4. `askRule` → ask (`rule:ask:<pattern>`).
 * 5. `policy` → its verdict (`policy`); an `error` → deny (`policy_error`).
 * 6. `needsApproval` → ask (`needs_approval`); an `error` → deny (`needs_approval_error`).
 * 7. Otherwise allow: `readonly` for a read-only tool, else `default`.
 *
 * Then, with `nonInteractive`, an ask becomes a deny (`non_interactive`) whose reason says approval
 * was needed and why.
 *
 * @example
 * decide({ tool: 'shell', denyRule: 'shell:cmd=rm*', grant: { scope: 'session' }, readOnly: false, nonInteractive: false })
 * // { decision: 'deny', source: 'rule:deny:shell:cmd=rm*', reason: "denied by rule 'shell:cmd=rm*'" }
 */
export function decide(input: DecideInput): DecideOutput {
  const first = firstMatch(input);
  if (first.decision !== 'ask' || !input.nonInteractive) return first;
  return {
    decision: 'deny',
    source: 'non_interactive',
    reason: `it needs approval (${first.reason}), but no one can approve calls in this non-interactive run`,
  };
}

/** What the rules read: the configuration, the grants, and the call under the turn's cancellation. */
export interface PolicyContext {
  readonly config: Pick<DispatcherConfig, 'rules' | 'policy' | 'nonInteractive'>;
  readonly grants: Pick<GrantList, 'match'>;
  readonly subject: Subject;
  /** What a policy function sees (made only when one runs). */
  readonly info: () => CallInfo;
  readonly cancel: Cancellation;
}

/** One rule: the facts it found (`undefined`: no opinion, ask the next rule), or the turn was cancelled. */
type Rule = (
  ctx: PolicyContext,
) => Partial<DecideInput> | undefined | Promise<Partial<DecideInput> | undefined | typeof CANCELLED>;

function firstPattern(rules: readonly Pattern[], { subject }: PolicyContext, anyElement: boolean): string | undefined {
  return rules.find((rule) => matchesPattern(rule, subject.call.name, subject.input, anyElement))?.source;
}

/** Runs the policy function under the turn's cancellation and checks its verdict. */
export async function policyFact(
  policy: Policy,
  info: CallInfo,
  cancel: Cancellation,
): Promise<PolicyFact | undefined | typeof CANCELLED> {
  let verdict: unknown;
  try {
    verdict = await raceUserCode(() => policy(info), cancel);
  } catch (error) {
    return { kind: 'error', reason: `the policy check failed (${errorMessage(error)})` };
  }
  if (verdict === undefined || verdict === CANCELLED) return verdict;
  const v = verdict as { kind?: unknown; reason?: unknown } | null;
  if (v !== null && typeof v === 'object') {
    if (v.kind === 'allow') return { kind: 'allow' };
    if ((v.kind === 'deny' || v.kind === 'ask') && typeof v.reason === 'string') return { kind: v.kind, reason: v.reason };
  }
  return { kind: 'error', reason: 'the policy returned an unrecognised verdict' };
}

/** Calls the tool's needsApproval with the validated input and checks its answer. */
export function needsApprovalFact({ tool, input }: Subject): NeedsApprovalFact | undefined {
  if (tool.needsApproval === true) return { kind: 'always' };
  if (typeof tool.needsApproval !== 'function') return undefined;
  let needed: unknown;
  try {
    needed = tool.needsApproval(input);
  } catch (error) {
    return { kind: 'error', reason: `its needsApproval check failed (${errorMessage(error)})` };
  }
  if (needed === true) return { kind: 'for_input' };
  return needed === false ? undefined : { kind: 'error', reason: 'its needsApproval check did not return a boolean' };
}

const present = <K extends keyof DecideInput>(key: K, value: DecideInput[K] | undefined): Partial<DecideInput> | undefined =>
  value === undefined ? undefined : ({ [key]: value } as Partial<DecideInput>);

/** The rules in precedence order; `decide` reads their facts in the same order. */
export const POLICY_RULES: readonly Rule[] = [
  (ctx) => present('denyRule', firstPattern(ctx.config.rules.deny, ctx, true)),
  (ctx) => present('grant', ctx.grants.match(ctx.subject.call.name, ctx.subject.input)),
  (ctx) => present('allowRule', firstPattern(ctx.config.rules.allow, ctx, false)),
  (ctx) => present('askRule', firstPattern(ctx.config.rules.ask, ctx, true)),
  async (ctx) => {
    const { policy } = ctx.config;
    if (policy === undefined) return undefined;
    const fact = await policyFact(policy, ctx.info(), ctx.cancel);
    return fact === CANCELLED ? fact : present('policy', fact);
  },
  (ctx) => present('needsApproval', needsApprovalFact(ctx.subject)),
];

/**
 * Evaluates the rules in order up to the first with an opinion, so later rules (and the user code
 * in them) do not run. Gives the facts for `decide`, or `CANCELLED` when the turn was cancelled
 * while the policy function ran. May throw if a pattern cannot be matched (a bug, not user code).
 */
export async function gatherFacts(ctx: PolicyContext): Promise<DecideInput | typeof CANCELLED> {
  const base: DecideInput = {
    tool: ctx.subject.tool.name,
    readOnly: Boolean(ctx.subject.tool.readOnly),
    nonInteractive: ctx.config.nonInteractive,
  };
  for (const rule of POLICY_RULES) {
    // Most rules are synchronous: awaiting only a promise keeps the common case free of extra ticks.
    const answer = rule(ctx);
    const found = answer instanceof Promise ? await answer : answer;
    if (found === CANCELLED) return CANCELLED;
    if (found !== undefined) return { ...base, ...found };
  }
  return base;
}

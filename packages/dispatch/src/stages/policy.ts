// Pipeline stage 5: policy. Two halves, so the precedence can be read and tested on its own:
// - `gatherFacts` reads the permission sets, the grants, the before-hooks' pre-approval and, when
//   none of the rules that settle a call alone has matched, the policy function and the tool's
//   needsApproval. It is the only half that runs user code, and it never leaves out a fact that
//   could change the decision.
// - `decide` is pure: it turns those facts into allow, deny or ask (docs/reference/dispatcher.md, "The decision
//   table", is the same precedence written as a table, and a test walks every combination).

import { CANCELLED, unlessAborted } from '../abort.js';
import { definedProps, errorMessage } from '@turnkit/core/internal';
import type { DispatcherConfig, PermissionSet } from '../config.js';
import { collidingArgument, matchesPattern, type Pattern } from '../patterns.js';
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
  /** An argument a rule names that the input holds under two keys differing only in case. */
  readonly ambiguousArgument?: string | undefined;
  /** The named permission set the three rule facts come from; absent for a single `permissions` object. */
  readonly set?: string | undefined;
  /** The source text of the first deny pattern of the deciding set that matches the call. */
  readonly denyRule?: string | undefined;
  /** The first remembered grant that covers the call. */
  readonly grant?: Grant | undefined;
  /** The source text of the first allow pattern of the deciding set that matches. */
  readonly allowRule?: string | undefined;
  /** The source text of the first ask pattern of the deciding set that matches. */
  readonly askRule?: string | undefined;
  /** The policy function's verdict; absent without a policy or when it had no opinion. */
  readonly policy?: PolicyFact | undefined;
  /** The tool's needsApproval; absent when approval is not needed. */
  readonly needsApproval?: NeedsApprovalFact | undefined;
  /** The name of the before-hook that pre-approved the call. */
  readonly hookApproval?: string | undefined;
  /** The tool is defined `readOnly`: it is allowed where the default would ask. */
  readonly readOnly: boolean;
  /** What happens when nothing else decides. Default `'ask'`. */
  readonly defaultDecision?: 'allow' | 'ask' | undefined;
  /** Every ask becomes an allow (source `yolo`); denials stay. */
  readonly yolo?: boolean | undefined;
  /** No one can approve: an ask becomes a denial. */
  readonly nonInteractive: boolean;
}

/** The policy stage's answer. */
export interface DecideOutput {
  /** What happens to the call: it runs (`allow`), is refused (`deny`) or waits for a person (`ask`). */
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

/** A permission rule's verdict: `rule:<verdict>:<pattern>`, or `set:<name>:<verdict>:<pattern>` for a named set. */
function ruleDecision(input: DecideInput, decision: DecideOutput['decision'], pattern: string): DecideOutput {
  const where = input.set === undefined ? '' : ` of permission set '${input.set}'`;
  const source = input.set === undefined ? `rule:${decision}:${pattern}` : `set:${input.set}:${decision}:${pattern}`;
  const reason =
    decision === 'deny'
      ? `denied by rule '${pattern}'${where}`
      : decision === 'allow'
        ? `allowed by rule '${pattern}'${where}`
        : `matches ask rule '${pattern}'${where}`;
  return { decision, source, reason };
}

/** The first row of the decision table that applies, before yolo and `nonInteractive`. */
function firstMatch(input: DecideInput): DecideOutput {
  const { ambiguousArgument, denyRule, grant, allowRule, askRule, policy, needsApproval, hookApproval, tool } = input;
  if (ambiguousArgument !== undefined)
    return {
      decision: 'deny',
      source: 'ambiguous_input',
      reason: `the input holds argument '${ambiguousArgument}' under keys that differ only in case, so a rule cannot tell which one the tool reads; send it once`,
    };
  if (denyRule !== undefined) return ruleDecision(input, 'deny', denyRule);
  if (grant !== undefined) return grantDecision(grant);
  if (allowRule !== undefined) return ruleDecision(input, 'allow', allowRule);
  if (policy?.kind === 'error') return { decision: 'deny', source: 'policy_error', reason: policy.reason };
  if (policy?.kind === 'deny') return { decision: 'deny', source: 'policy', reason: policy.reason };
  if (needsApproval?.kind === 'error') return { decision: 'deny', source: 'needs_approval_error', reason: needsApproval.reason };
  if (hookApproval !== undefined)
    return {
      decision: 'allow',
      source: `hook:${hookApproval}:approved`,
      reason: `pre-approved by before-hook '${hookApproval}'`,
    };
  if (askRule !== undefined) return ruleDecision(input, 'ask', askRule);
  if (policy !== undefined)
    return { decision: policy.kind, source: 'policy', reason: policy.kind === 'allow' ? 'allowed by policy' : policy.reason };
  if (needsApproval?.kind === 'always')
    return { decision: 'ask', source: 'needs_approval', reason: `tool '${tool}' needs approval` };
  if (needsApproval?.kind === 'for_input')
    return { decision: 'ask', source: 'needs_approval', reason: `tool '${tool}' needs approval for this input` };
  if (input.readOnly) return { decision: 'allow', source: 'readonly', reason: 'read-only tool' };
  return input.defaultDecision === 'allow'
    ? { decision: 'allow', source: 'default', reason: 'no rule applied' }
    : { decision: 'ask', source: 'default', reason: `no rule allows tool '${tool}', and it is not read-only` };
}

/**
 * The policy precedence, a pure function of the facts. The first row that applies decides:
 *
 * 1. `ambiguousArgument` → deny (`ambiguous_input`).
 * 2. `denyRule` → deny (`rule:deny:<pattern>`, or `set:<name>:deny:<pattern>`). Deny beats grants.
 * 3. `grant` → allow (`grant:session`, `grant:tool:<tool>`, `grant:pattern:<pattern>`).
 * 4. `allowRule` → allow (`rule:allow:<pattern>`).
 * 5. `policy` error → deny (`policy_error`); `policy` deny → deny (`policy`).
 * 6. `needsApproval` error → deny (`needs_approval_error`).
 * 7. `hookApproval` → allow (`hook:<name>:approved`).
 * 8. `askRule` → ask (`rule:ask:<pattern>`).
 * 9. `policy` ask or allow → that (`policy`).
 * 10. `needsApproval` → ask (`needs_approval`).
 * 11. `readOnly` → allow (`readonly`).
 * 12. Otherwise `defaultDecision` (`default`): ask unless it is `'allow'`.
 *
 * Then an ask becomes an allow with `yolo` (`yolo`), else a deny with `nonInteractive`
 * (`non_interactive`), whose reason says approval was needed and why.
 *
 * @example
 * decide({ tool: 'shell', denyRule: 'shell:cmd=rm*', grant: { scope: 'session' }, readOnly: false, nonInteractive: false })
 * // { decision: 'deny', source: 'rule:deny:shell:cmd=rm*', reason: "denied by rule 'shell:cmd=rm*'" }
 */
export function decide(input: DecideInput): DecideOutput {
  const first = firstMatch(input);
  if (first.decision !== 'ask') return first;
  if (input.yolo === true)
    return { decision: 'allow', source: 'yolo', reason: `allowed by yolo (it would ask: ${first.reason})` };
  if (!input.nonInteractive) return first;
  return {
    decision: 'deny',
    source: 'non_interactive',
    reason: `it needs approval (${first.reason}), but no one can approve calls in this non-interactive run`,
  };
}

/** What the rules read: the configuration, the turn's grants, and the call under the turn's cancellation. */
export interface PolicyContext {
  readonly config: Pick<DispatcherConfig, 'permissionSets' | 'policy' | 'nonInteractive' | 'defaultDecision' | 'yolo'>;
  /** The first grant of the turn (or session) that covers the call. */
  readonly grant: (tool: string, input: unknown) => Grant | undefined;
  readonly subject: Subject;
  /** The before-hook that pre-approved the call, if one did. */
  readonly hookApproval?: string | undefined;
  /** What a policy function sees (made only when one runs). */
  readonly info: () => CallInfo;
  readonly signal: AbortSignal;
}

function firstPattern(rules: readonly Pattern[], { call, input }: Subject, restricting: boolean): string | undefined {
  return rules.find((rule) => matchesPattern(rule, call.name, input, restricting))?.source;
}

/** The rule facts: from the first permission set with a matching rule, and any ambiguous argument. */
export function ruleFacts(sets: readonly PermissionSet[], subject: Subject): Partial<DecideInput> {
  const all = sets.flatMap((s) => [...s.deny, ...s.allow, ...s.ask]);
  const ambiguousArgument = collidingArgument(all, subject.call.name, subject.input);
  if (ambiguousArgument !== undefined) return { ambiguousArgument };
  for (const set of sets) {
    const denyRule = firstPattern(set.deny, subject, true);
    const allowRule = firstPattern(set.allow, subject, false);
    const askRule = firstPattern(set.ask, subject, true);
    if (denyRule === undefined && allowRule === undefined && askRule === undefined) continue;
    return { ...(set.name === undefined ? {} : { set: set.name }), denyRule, allowRule, askRule };
  }
  return {};
}

/**
 * The deny that stops an approved call at execution time (deny always wins): the rules in force
 * now, read the same way as when the call was classified. Undefined when they do not deny it.
 */
export function denialNow(config: Pick<DispatcherConfig, 'permissionSets'>, subject: Subject): DecideOutput | undefined {
  const facts = ruleFacts(config.permissionSets, subject);
  if (facts.ambiguousArgument === undefined && facts.denyRule === undefined) return undefined;
  return decide({ ...facts, tool: subject.tool.name, readOnly: false, nonInteractive: false });
}

/** Runs the policy function under the turn's cancellation and checks its verdict. */
export async function policyFact(
  policy: Policy,
  info: CallInfo,
  signal: AbortSignal,
): Promise<PolicyFact | undefined | typeof CANCELLED> {
  let verdict: unknown;
  try {
    verdict = await unlessAborted(() => policy(info), signal);
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

/** The facts from the rules and grants alone, and whether they settle the call by themselves. */
function ruleAndGrantFacts(ctx: FactsContext): { readonly facts: DecideInput; readonly settled: boolean } {
  const { config, subject } = ctx;
  const rules = ruleFacts(config.permissionSets, subject);
  const denied = rules.ambiguousArgument !== undefined || rules.denyRule !== undefined;
  const grant = denied ? undefined : ctx.grant(subject.call.name, subject.input);
  const facts: DecideInput = {
    tool: subject.tool.name,
    readOnly: Boolean(subject.tool.readOnly),
    nonInteractive: config.nonInteractive,
    defaultDecision: config.defaultDecision,
    yolo: config.yolo,
    ...definedProps({ hookApproval: ctx.hookApproval }),
    ...rules,
    ...definedProps({ grant }),
  };
  return { facts, settled: denied || grant !== undefined || rules.allowRule !== undefined };
}

function withNeedsApproval(subject: Subject, facts: DecideInput): DecideInput {
  const needsApproval = needsApprovalFact(subject);
  return needsApproval === undefined ? facts : { ...facts, needsApproval };
}

/** What the facts are gathered from when no policy function runs. */
export type FactsContext = Pick<PolicyContext, 'config' | 'grant' | 'subject' | 'hookApproval'>;

/**
 * The facts for `decide`, or `CANCELLED` when the turn was cancelled while the policy function
 * ran. The rules that settle a call alone (an ambiguous argument, a deny, a grant, an allow) are
 * read first; only when none matched do the policy function and needsApproval run (a policy
 * deny skips needsApproval). So user code runs only when its answer can change the decision,
 * and `decide` of these facts equals `decide` of all the facts. May throw if a pattern cannot be
 * matched (a bug, not user code).
 */
export async function gatherFacts(ctx: PolicyContext): Promise<DecideInput | typeof CANCELLED> {
  if (ruleAndGrantFacts(ctx).settled) return factsWithPolicy(ctx, undefined);
  const { policy: run } = ctx.config;
  const policy = run === undefined ? undefined : await policyFact(run, ctx.info(), ctx.signal);
  if (policy === CANCELLED) return CANCELLED;
  return factsWithPolicy(ctx, policy);
}

/**
 * The facts for `decide` given what the policy function answered (undefined: no opinion, or it
 * did not run because the rules settle the call). `gatherFacts` runs the policy function and asks
 * this; the model checker asks it for each answer a policy function can give.
 */
export function factsWithPolicy(ctx: FactsContext, policy: PolicyFact | undefined): DecideInput {
  const { facts, settled } = ruleAndGrantFacts(ctx);
  if (settled) return facts;
  if (policy === undefined) return withNeedsApproval(ctx.subject, facts);
  const withPolicy: DecideInput = { ...facts, policy };
  return policy.kind === 'deny' || policy.kind === 'error' ? withPolicy : withNeedsApproval(ctx.subject, withPolicy);
}

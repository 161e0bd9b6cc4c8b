// The tool-call pipeline. Every call goes through these stages, in this order:
//
//   1 normalise → 2 resolve → 3 validate     stages/normalise.ts   (normalise, resolve, validateInput)
//   4 before-hooks                           stages/hooks.ts       (runBeforeHooks)
//   5 policy                                 stages/policy.ts      (gatherFacts, then the pure decide)
//     → a call that asks parks here, as classified; once approved (`executeApproved`) it runs
//       1–3 again, then only the deny rules in force now (`denialNow`), then 6–9
//   6 budget pre-check                       budget.ts             (BudgetLedger.reserve)
//   7 execute: timeout, abort, retry         stages/execute.ts     (runTool)
//   8 budget record, after-hooks             budget.ts, stages/hooks.ts (record, runAfterHooks)
//   9 shape                                  shape.ts              (shapeResult)
//
// Rules of this file:
// - Nothing from a model, a tool, a hook or a policy is trusted. The stages that run user code
//   catch; a failure before the tool runs denies the call (fail closed), a failure after it
//   withholds the output. Nothing exported here throws.
// - Every call gets exactly one result (or is parked) and, from `dispatch`, exactly one decision
//   record. A whole batch is composed from these stages in batch.ts, which emits its records in
//   one place, in call order, after the whole batch is classified and admitted.
// - Mutable state (grants, budget counters) lives in `Pipeline`; classifying reads it and never
//   changes it.

import { agentActionOf } from './agent-tools.js';
import type { ApprovalDecision, ToolCall, ToolResult } from '@turnkit/core';
import { copyJson, definedProps, endSentence, errorMessage, rejectionText } from '@turnkit/core/internal';
import type { ApprovalLedger } from './approvals.js';
import type { BudgetLedger } from './budget.js';
import type { AnyTool, DispatcherConfig } from './config.js';
import { badContextText, type Turn } from './context.js';
import type { GrantStore } from './grants.js';
import { CANCELLED } from './abort.js';
import { UP_FRONT } from './records.js';
import { deny, errorResult, idName, type Denial, type RawVerdict } from './results.js';
import { shapeResult } from './shape.js';
import { runTool } from './stages/execute.js';
import { callInfo, cancelledBefore, runAfterHooks, runBeforeHooks, type Hooked, type Subject } from './stages/hooks.js';
import { normalise, resolve, validateInput } from './stages/normalise.js';
import { decide, denialNow, factsWithPolicy, gatherFacts, type DecideInput } from './stages/policy.js';
import { quote } from './text.js';
import type { ApprovedVerdict, ExecutionOutcome, RawResult, Verdict } from './types.js';
import { runWrapped } from './wrapper.js';

/** What the stages run with: the frozen configuration and the dispatcher's state. */
export interface Pipeline {
  readonly config: DispatcherConfig;
  readonly grants: GrantStore;
  /** Approvals recorded and not yet executed: the source of each call's final record. */
  readonly approvals: ApprovalLedger;
  readonly ledger: BudgetLedger;
  /** Execute verdicts made by classify: their input is validated already, so `execute` does not parse it again. */
  readonly classified: WeakSet<object>;
}

/** What classifying read of a call, for its audit record: the input as sent (the call's fields are read once). */
export interface Seen {
  input?: unknown;
}

/** Stages 1–2: the call as a plain copy and its tool, or a denial (`invalid_call`, `invalid_json`, `unknown_tool`). */
function checkCall(p: Pipeline, raw: unknown, seen: Seen): { readonly call: ToolCall; readonly tool: AnyTool } | Denial {
  const normalised = normalise(raw);
  if (normalised.kind === 'deny') return normalised;
  const { call } = normalised;
  seen.input = call.input;
  const resolved = resolve(call, p.config.tools, p.config.availableText);
  return resolved.kind === 'deny' ? resolved : { call, tool: resolved.tool };
}

/** The denial of a call whose input the tool's schema refused. */
function invalidInput(call: ToolCall, text: string): Denial {
  return deny(call, 'invalid_input', text, 'invalid_input');
}

const isDenial = (value: object): value is Denial => 'kind' in value && value.kind === 'deny';

/** A verdict for a call that would park but was decided up front (`DispatchContext.decisions`). */
function decidedUpFront(call: ToolCall, input: unknown, decision: ApprovalDecision): RawVerdict {
  if (decision.type === 'approve') return { kind: 'execute', call, input, source: UP_FRONT };
  return deny(call, UP_FRONT, rejectionText(decision.reason), 'denied');
}

/** What the before-hooks leave when there are none: the validated input, parsed from the call's own. */
function unhooked(subject: Subject): Hooked {
  return { kind: 'ok', input: subject.input, raw: subject.call.input };
}

/** Stage 5's verdict from the facts gathered for the call as the hooks left it. */
function policyVerdict(p: Pipeline, subject: Subject, hooked: Hooked, facts: DecideInput, turn: Turn): RawVerdict {
  const { call, input } = subject;
  const { decision, source, reason } = decide(facts);
  if (decision === 'allow') return { kind: 'execute', call, input, source };
  if (decision === 'deny') {
    const advice = source === 'non_interactive' ? 'Continue without it.' : 'Do not retry it unchanged; continue without it.';
    return deny(call, source, `${endSentence(`Call to ${quote(call.name)} denied: ${reason}`)} ${advice}`, 'denied');
  }
  const upFront = turn.decisions?.get(call.id);
  if (upFront !== undefined && p.approvals.useUpFront(turn, call.id)) return decidedUpFront(call, input, upFront);
  // Parked as classified: the input that runs once approved is what the hooks left, before the
  // schema parsed it (the schema parses it again then, the hooks do not run again).
  const parkedInput = hooked.raw === call.input ? call.input : copyJson(hooked.raw);
  if (parkedInput === undefined)
    return deny(
      call,
      'internal_error',
      `Call to ${quote(call.name)} denied: a before-hook rewrote its input into a value that is not JSON, so it cannot wait for approval.`,
      'internal',
    );
  return { kind: 'needs_approval', call, input: parkedInput, reason, source };
}

/**
 * The verdict for a call a person approved, once its input is validated: the deny rules in force
 * now still win (deny always wins); else it runs, its record's source from `source()`.
 */
function approvedVerdict(p: Pipeline, subject: Subject, advice: string, source: () => string): RawVerdict {
  const { call, input } = subject;
  const denial = denialNow(p.config, subject);
  if (denial === undefined) return { kind: 'execute', call, input, source: source() };
  return deny(call, denial.source, `${endSentence(`Call to ${quote(call.name)} denied: ${denial.reason}`)} ${advice}`, 'denied');
}

/**
 * A call a person approved, once stages 1–3 ran again: only the deny rules in force now (deny
 * always wins). No hooks (they ran when the call was classified) and no other rule: the person decided.
 */
function classifyApproved(p: Pipeline, subject: Subject, turn: Turn): RawVerdict {
  const advice = 'A person approved it, but a deny rule in force now stops it; continue without it.';
  return approvedVerdict(p, subject, advice, () => p.approvals.take(turn, subject.call.id));
}

/** Stage 9 for a denial; other verdicts pass unchanged. */
function shapeVerdict(p: Pipeline, verdict: RawVerdict): Verdict {
  return verdict.kind === 'deny' ? { ...verdict, result: shapeResult(verdict.result, p.config.maxOutputChars) } : verdict;
}

/** A verdict `classify` gives: an execute verdict is marked classified (its input is validated), a denial shaped. */
function classified(p: Pipeline, verdict: RawVerdict): Verdict {
  if (verdict.kind === 'execute') p.classified.add(verdict);
  return shapeVerdict(p, verdict);
}

/**
 * Stages 1–5 for one call of a readable context, or its denial for an unreadable one; with
 * `approved`, stages 1–3 and the deny rules in force now (`classifyApproved`). Only the stages
 * that run code that may wait are awaited: validation, and the before-hooks and the policy
 * function when there are any. Never throws (nor rejects).
 */
export async function classify(p: Pipeline, raw: unknown, turn: Turn, approved: boolean, seen: Seen = {}): Promise<Verdict> {
  if (turn.problem !== undefined) {
    const { id, name } = idName(raw);
    return classified(p, deny({ id, name }, 'invalid_context', badContextText(name, turn.problem), 'internal'));
  }
  try {
    const checked = checkCall(p, raw, seen); //                                           1–2
    if (isDenial(checked)) return classified(p, checked);
    const { call, tool } = checked;
    const validated = await validateInput(tool, call.name, call.input, tool.coerce ?? p.config.coerce); //   3
    if (!validated.ok) return classified(p, invalidInput(call, validated.text));
    const subject: Subject = { call, tool, input: validated.input };
    if (approved) return classified(p, classifyApproved(p, subject, turn));
    const { before } = p.config.hooks;
    const hooked = before.length === 0 ? unhooked(subject) : await runBeforeHooks(before, subject, turn); //  4
    if (hooked.kind === 'deny') return classified(p, hooked);
    const hookedSubject = hooked.input === subject.input ? subject : { call, tool, input: hooked.input };
    if (turn.signal.aborted) return classified(p, cancelledBefore(call));
    const facts = {
      config: p.config,
      grant: (name: string, input: unknown) => p.grants.match(turn, name, input),
      subject: hookedSubject,
      hookApproval: hooked.approvedBy,
    };
    const gathered =
      p.config.policy === undefined
        ? factsWithPolicy(facts, undefined)
        : await gatherFacts({ ...facts, info: () => callInfo(hookedSubject, turn), signal: turn.signal }); //  5
    if (gathered === CANCELLED) return classified(p, cancelledBefore(call));
    return classified(p, policyVerdict(p, hookedSubject, hooked, gathered, turn));
  } catch (error) {
    // A call whose fields throw when read (a hostile getter), or a bug here: this one call is denied.
    return classified(
      p,
      deny(
        idName(raw),
        'internal_error',
        `Call denied: the dispatcher failed while checking it (${errorMessage(error)}).`,
        'internal',
      ),
    );
  }
}

/** Stage 6 for a classified call: an execute verdict reserves its budget, or is denied. */
export function admit(p: Pipeline, verdict: Verdict): Verdict {
  if (verdict.kind !== 'execute') return verdict;
  const breach = p.ledger.reserve(verdict.call.name);
  return breach === undefined ? verdict : shapeVerdict(p, deny(verdict.call, breach.source, breach.text, 'budget'));
}

/** A call's final result, with the tries and time its execution took (0 and 0 when it did not run). */
export interface Ran {
  readonly result: ToolResult;
  readonly attempts: number;
  readonly durationMs: number;
}

/** Stage 7 inside the execution wrapper: the tool's raw result, with the tries and time run() took. */
async function executeWrapped(
  p: Pipeline,
  wrapper: NonNullable<DispatcherConfig['wrapExecution']>,
  tool: AnyTool,
  call: ToolCall,
  input: unknown,
  turn: Turn,
): Promise<{ raw: RawResult; attempts: number; durationMs: number }> {
  let ran: RawResult | undefined;
  const run = async (): Promise<ExecutionOutcome> => {
    const begun = performance.now();
    const { result, attempts } = await runTool(tool, call, input, turn, p.config);
    ran = result;
    const { isError, output, errorKind } = result;
    return { isError, output, ...definedProps({ errorKind }), attempts, durationMs: performance.now() - begun };
  };
  const execution = { turnId: turn.turnId, call, tool: tool.name, input };
  const outcome = await runWrapped(wrapper, execution, run, turn.signal);
  const { attempts, durationMs, ...raw } = outcome;
  return { raw: ran ?? { callId: call.id, name: call.name, ...raw }, attempts, durationMs };
}

/** Stages 7–9 for a call whose budget is reserved. Never throws. */
export async function runReserved(p: Pipeline, tool: AnyTool, call: ToolCall, input: unknown, turn: Turn): Promise<Ran> {
  let recorded = false;
  let result: RawResult;
  let attempts = 0;
  let durationMs = 0;
  try {
    // 7: the tool, inside the execution wrapper if there is one.
    const wrapper = p.config.wrapExecution;
    let ran: RawResult;
    if (wrapper === undefined) {
      const start = performance.now();
      const executed = await runTool(tool, call, input, turn, p.config);
      ran = executed.result;
      attempts = executed.attempts;
      durationMs = performance.now() - start;
    } else ({ raw: ran, attempts, durationMs } = await executeWrapped(p, wrapper, tool, call, input, turn));
    p.ledger.record(call.name); //                                                        8
    recorded = true;
    const overridden: RawResult = tool.model === undefined ? ran : { ...ran, modelOverride: tool.model };
    // A runtime tool's call (agent-tools.ts) carries what core does once it ran; a failed one does nothing.
    const action = ran.isError ? undefined : agentActionOf(tool, input);
    const withModel: RawResult = action === undefined ? overridden : { ...overridden, action };
    const { after } = p.config.hooks;
    result =
      after.length === 0 ? withModel : await runAfterHooks(after, withModel, callInfo({ call, tool, input }, turn), turn.signal);
  } catch (error) {
    if (!recorded) p.ledger.record(call.name);
    result = errorResult(
      call.id,
      call.name,
      `Error calling tool '${call.name}': the dispatcher failed while running it (${errorMessage(error)}).`,
      'internal',
    );
  }
  return { result: shapeResult(result, p.config.maxOutputChars), attempts, durationMs }; //    9
}

/** Stages 6–9 for one verdict given to `execute` (stages 2–3 again unless it came from `classify`). Never throws. */
export async function executeVerdict(p: Pipeline, verdict: Verdict | ApprovedVerdict, turn: Turn): Promise<ToolResult> {
  try {
    if (verdict.kind === 'deny') return verdict.result;
    const { call } = verdict;
    const refuse = (denial: Denial): ToolResult => shapeResult(denial.result, p.config.maxOutputChars);
    if (verdict.kind === 'needs_approval')
      return refuse(
        deny(
          call,
          verdict.source,
          `Call to ${quote(call.name)} not run: it is waiting for approval (${verdict.reason}).`,
          'not_executed',
        ),
      );
    // A verdict from `classify` has its input validated; an approved verdict made by the caller is
    // validated here (no coercion: the caller gives the input that runs), and deny always wins.
    const resolved = resolve(call, p.config.tools, p.config.availableText);
    if (resolved.kind === 'deny') return refuse(resolved);
    const { tool } = resolved;
    let input = verdict.input;
    if (!p.classified.has(verdict)) {
      const validated = await validateInput(tool, call.name, input, false);
      if (!validated.ok) return refuse(invalidInput(call, validated.text));
      input = validated.input;
      const approved = approvedVerdict(p, { call, tool, input }, 'Continue without it.', () => 'user');
      if (approved.kind === 'deny') return refuse(approved);
    }
    const breach = p.ledger.reserve(call.name);
    if (breach !== undefined) return refuse(deny(call, breach.source, breach.text, 'budget'));
    return (await runReserved(p, tool, call, input, turn)).result;
  } catch (error) {
    const { id, name } = idName((verdict as { call?: unknown } | null)?.call);
    return errorResult(id, name, `Call not run: the dispatcher failed while running it (${errorMessage(error)}).`, 'internal');
  }
}

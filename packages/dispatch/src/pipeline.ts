// The tool-call pipeline. Every call goes through these stages, in this order:
//
//   1 normalise → 2 resolve → 3 validate     stages/normalise.ts   (normalise, resolve, validate)
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

import { copyJson, definedProps, rejectionText } from '@turnkit/core/internal';
import type { ApprovalDecision, ParkedCall, ToolCall, ToolResult } from '@turnkit/core';
import type { ApprovalLedger } from './approvals.js';
import type { BudgetLedger } from './budget.js';
import type { AnyTool, DispatcherConfig } from './config.js';
import { badContextText, type Turn } from './context.js';
import type { GrantStore } from './grants.js';
import { CANCELLED } from './race.js';
import { callRecord, emitRecord } from './audit.js';
import { decisionRecord, emitRecords, UP_FRONT } from './records.js';
import type { ToolErrorKind } from './errors.js';
import { deny, errorResult, idName, type Denial, type RawVerdict } from './results.js';
import { shapeResult } from './shape.js';
import { runTool } from './stages/execute.js';
import { callInfo, cancelledBefore, runAfterHooks, runBeforeHooks, type Hooked, type Subject } from './stages/hooks.js';
import { normalise, resolve, unknownToolText, validate, validateInput, type Validated } from './stages/normalise.js';
import { decide, denialNow, gatherFacts, type DecideInput } from './stages/policy.js';
import { errorMessage, quote } from './text.js';
import type { ApprovedVerdict, DispatchOutcome, ExecutionOutcome, RawResult, Verdict } from './types.js';
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

/** A verdict for a call that would park but was decided up front (`DispatchContext.decisions`). */
function decidedUpFront(call: ToolCall, input: unknown, decision: ApprovalDecision): RawVerdict {
  if (decision.type === 'approve') return { kind: 'execute', call, input, source: UP_FRONT };
  return deny(call, UP_FRONT, rejectionText(decision.reason), 'denied');
}

/**
 * Stages 1–5 for `dispatch` and `classify`, stage after stage. A stage that has nothing to wait
 * for (a synchronous schema, no before-hooks, no policy function) answers at once: the verdict is
 * a promise only when some stage waited.
 */
function classifyCall(p: Pipeline, raw: unknown, turn: Turn, seen: Seen): RawVerdict | Promise<RawVerdict> {
  const normalised = normalise(raw); //                                                  1
  if (normalised.kind === 'deny') return normalised;
  const { call } = normalised;
  seen.input = call.input;
  const resolved = resolve(call, p.config.tools, p.config.availableText); //              2
  if (resolved.kind === 'deny') return resolved;
  const { tool } = resolved;
  const validated = validateInput(tool, call.name, call.input, tool.coerce ?? p.config.coerce); //    3
  return validated instanceof Promise
    ? validated.then((v) => beforeHooks(p, call, tool, v, turn))
    : beforeHooks(p, call, tool, validated, turn);
}

/** Stage 4, when the input is valid. */
function beforeHooks(
  p: Pipeline,
  call: ToolCall,
  tool: AnyTool,
  validated: Validated,
  turn: Turn,
): RawVerdict | Promise<RawVerdict> {
  if (!validated.ok) return deny(call, 'invalid_input', validated.text, 'invalid_input');
  const hooks = p.config.hooks.before;
  if (hooks.length === 0) return policyStage(p, call, tool, { kind: 'ok', input: validated.input, raw: call.input }, turn);
  return runBeforeHooks(hooks, { call, tool, input: validated.input }, turn).then((hooked) =>
    policyStage(p, call, tool, hooked, turn),
  );
}

/** Stage 5, when no before-hook denied the call. */
function policyStage(
  p: Pipeline,
  call: ToolCall,
  tool: AnyTool,
  hooked: Hooked | Denial,
  turn: Turn,
): RawVerdict | Promise<RawVerdict> {
  if (hooked.kind === 'deny') return hooked;
  const subject = { call, tool, input: hooked.input };
  if (turn.cancel.aborted) return cancelledBefore(call);
  const facts = gatherFacts({
    config: p.config,
    grant: (name, input) => p.grants.match(turn, name, input),
    subject,
    hookApproval: hooked.approvedBy,
    info: () => callInfo(subject, turn),
    cancel: turn.cancel,
  }); // 5
  return facts instanceof Promise
    ? facts.then((f) => verdictOf(p, subject, hooked.raw, f, turn))
    : verdictOf(p, subject, hooked.raw, facts, turn);
}

/** The verdict the facts decide; `raw` is what the before-hooks left, parked if the call must wait for approval. */
function verdictOf(p: Pipeline, subject: Subject, raw: unknown, facts: DecideInput | typeof CANCELLED, turn: Turn): RawVerdict {
  const { call } = subject;
  if (facts === CANCELLED) return cancelledBefore(call);
  const { decision, source, reason } = decide(facts);
  if (decision === 'allow') return { kind: 'execute', call, input: subject.input, source };
  if (decision === 'deny') {
    const advice = source === 'non_interactive' ? 'Continue without it.' : 'Do not retry it unchanged; continue without it.';
    return deny(call, source, `Call to ${quote(call.name)} denied: ${reason}. ${advice}`, 'denied');
  }
  const upFront = turn.decisions?.get(call.id);
  if (upFront !== undefined && p.approvals.useUpFront(turn, call.id)) return decidedUpFront(call, subject.input, upFront);
  // Parked as classified: the input that runs once approved is what the hooks left, before the
  // schema parsed it (the schema parses it again then, the hooks do not run again).
  const parkedInput = raw === call.input ? call.input : copyJson(raw);
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
 * Stages 1–3 again for a call a person approved, then the deny rules in force now (deny always
 * wins). No hooks (they ran when the call was classified) and no other rule: the person decided.
 */
function classifyApproved(p: Pipeline, raw: unknown, turn: Turn, seen: Seen): RawVerdict | Promise<RawVerdict> {
  const normalised = normalise(raw);
  if (normalised.kind === 'deny') return normalised;
  const { call } = normalised;
  seen.input = call.input;
  const resolved = resolve(call, p.config.tools, p.config.availableText);
  if (resolved.kind === 'deny') return resolved;
  const { tool } = resolved;
  const validated = validateInput(tool, call.name, call.input, tool.coerce ?? p.config.coerce);
  return validated instanceof Promise
    ? validated.then((v) => approvedVerdict(p, call, tool, v, turn))
    : approvedVerdict(p, call, tool, validated, turn);
}

/** An approved call's verdict once its input is validated: deny rules in force now still win. */
function approvedVerdict(p: Pipeline, call: ToolCall, tool: AnyTool, validated: Validated, turn: Turn): RawVerdict {
  if (!validated.ok) return deny(call, 'invalid_input', validated.text, 'invalid_input');
  const denial = denialNow(p.config, { call, tool, input: validated.input });
  if (denial !== undefined)
    return deny(
      call,
      denial.source,
      `Call to ${quote(call.name)} denied: ${denial.reason}. A person approved it, but a deny rule in force now stops it; continue without it.`,
      'denied',
    );
  return { kind: 'execute', call, input: validated.input, source: p.approvals.take(turn, call.id) };
}

/** Stage 9 for a denial; other verdicts pass unchanged. */
function shapeVerdict(p: Pipeline, verdict: RawVerdict): Verdict {
  return verdict.kind === 'deny' ? { ...verdict, result: shapeResult(verdict.result, p.config.maxOutputChars) } : verdict;
}

/** What classifying read of a call, for its audit record: the input as sent (the call's fields are read once). */
export interface Seen {
  input?: unknown;
}

/** Stages 1–5 for one call of a readable context, or its denial for an unreadable one. Never throws (nor rejects). */
export function classify(p: Pipeline, raw: unknown, turn: Turn, approved: boolean, seen: Seen = {}): Verdict | Promise<Verdict> {
  if (turn.problem !== undefined) {
    const { id, name } = idName(raw);
    return shapeVerdict(p, deny({ id, name }, 'invalid_context', badContextText(name, turn.problem), 'internal'));
  }
  let verdict: RawVerdict | Promise<RawVerdict>;
  try {
    verdict = approved ? classifyApproved(p, raw, turn, seen) : classifyCall(p, raw, turn, seen);
  } catch (error) {
    return classified(p, failedCheck(raw, error));
  }
  if (verdict instanceof Promise)
    return verdict.then(
      (v) => classified(p, v),
      (error: unknown) => classified(p, failedCheck(raw, error)),
    );
  return classified(p, verdict);
}

/** A call whose fields throw when read (a hostile getter), or a bug here: this one call is denied. */
function failedCheck(raw: unknown, error: unknown): RawVerdict {
  return deny(
    idName(raw),
    'internal_error',
    `Call denied: the dispatcher failed while checking it (${errorMessage(error)}).`,
    'internal',
  );
}

function classified(p: Pipeline, verdict: RawVerdict): Verdict {
  if (verdict.kind === 'execute') p.classified.add(verdict);
  return shapeVerdict(p, verdict);
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
  const outcome = await runWrapped(wrapper, execution, run, turn.cancel);
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
    const withModel: RawResult = tool.model === undefined ? ran : { ...ran, modelOverride: tool.model };
    const { after } = p.config.hooks;
    result =
      after.length === 0 ? withModel : await runAfterHooks(after, withModel, callInfo({ call, tool, input }, turn), turn.cancel);
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

/** Stages 6–9 for one verdict given to `execute` (stage 3 again unless it came from `classify`). Never throws. */
export async function executeVerdict(p: Pipeline, verdict: Verdict | ApprovedVerdict, turn: Turn): Promise<ToolResult> {
  try {
    if (verdict.kind === 'deny') return verdict.result;
    const { call } = verdict;
    const refuse = (text: string, kind: ToolErrorKind): ToolResult =>
      shapeResult(errorResult(call.id, call.name, text, kind), p.config.maxOutputChars);
    if (verdict.kind === 'needs_approval')
      return refuse(`Call to ${quote(call.name)} not run: it is waiting for approval (${verdict.reason}).`, 'not_executed');
    const tool = p.config.tools.get(call.name);
    if (tool === undefined) return refuse(unknownToolText(call.name, p.config.availableText), 'unknown_tool');
    let input = verdict.input;
    if (!p.classified.has(verdict)) {
      // An approved verdict made by the caller: validated here, and deny always wins.
      const checked = await validate(tool, call.name, input);
      if (!checked.ok) return refuse(checked.text, 'invalid_input');
      input = checked.input;
      const denial = denialNow(p.config, { call, tool, input });
      if (denial !== undefined)
        return refuse(`Call to ${quote(call.name)} denied: ${denial.reason}. Continue without it.`, 'denied');
    }
    const breach = p.ledger.reserve(call.name);
    if (breach !== undefined) return refuse(breach.text, 'budget');
    return (await runReserved(p, tool, call, input, turn)).result;
  } catch (error) {
    const { id, name } = idName((verdict as { call?: unknown } | null)?.call);
    return errorResult(id, name, `Call not run: the dispatcher failed while running it (${errorMessage(error)}).`, 'internal');
  }
}

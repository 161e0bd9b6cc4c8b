// The dispatcher: the validated configuration, the grant list and the budget ledger, and the
// pipeline (pipeline.ts) behind the methods of `Dispatcher`. Each method reads the caller's context
// once (context.ts); none of the running methods throws.

import type { ApprovalDecision, ToolCall } from '@turnkit/core';
import { BudgetLedger } from './budget.js';
import { resolveConfig, type DispatcherConfig } from './config.js';
import { badContextText, readContext } from './context.js';
import { ApprovalLedger } from './approvals.js';
import { GrantStore } from './grants.js';
import { dispatchBatch } from './batch.js';
import { classify, executeVerdict, type Pipeline } from './pipeline.js';
import { approvalSource, closingRecord, emitRecords } from './records.js';
import { errorResult, idName } from './results.js';
import type { ApprovedVerdict, Dispatcher, DispatcherOptions, ParkedOutcome, Verdict } from './types.js';

/** A grant scope from what the caller passed; throws a TypeError when it has no turn id. */
function scopeOf(scope: { readonly turnId?: unknown; readonly session?: unknown }): { turnId: string; session?: string } {
  if (scope === null || typeof scope !== 'object' || typeof scope.turnId !== 'string')
    throw new TypeError('A grant scope must be { turnId, session? }, as in the dispatch context.');
  return typeof scope.session === 'string' ? { turnId: scope.turnId, session: scope.session } : { turnId: scope.turnId };
}

/** The calls of a batch as a plain array; what cannot be read is an empty batch. */
function listOf(calls: unknown): unknown[] {
  try {
    return Array.from(calls as ArrayLike<unknown>);
  } catch {
    return [];
  }
}

/** The call a verdict is about, for an error result; never throws. */
function callOf(verdict: Verdict | ApprovedVerdict): unknown {
  try {
    return verdict.kind === 'deny' ? { id: verdict.result.callId, name: verdict.result.name } : verdict.call;
  } catch {
    return undefined;
  }
}

/**
 * Creates the dispatcher every tool call flows through. Throws a `TypeError` naming the option on
 * invalid options (a duplicate tool name, a malformed pattern, a bad limit).
 *
 * @example
 * const dispatcher = createDispatcher({ tools: [add], permissions: { allow: ['shell:cmd=ls -la'], ask: ['shell'] } });
 * const { results, parked } = await dispatcher.dispatch(calls, { turnId: 't1', signal });
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  return dispatcherOf(resolveConfig(options));
}

/**
 * Checks `options` once and returns a function that makes dispatchers from them, for a server that
 * runs many turns with the same tools: each dispatcher made shares the checked tools, rules, hooks
 * and tool specs (JSON Schemas included) and has its own grants and budget ledger, as
 * `createDispatcher(options)` would. Throws as `createDispatcher` does, at once.
 *
 * @example
 * const perTurn = dispatcherFactory({ tools: [add], permissions: { ask: ['add'] } });
 * const dispatcher = perTurn(); // one per turn: grants remembered in one turn stay in it
 */
export function dispatcherFactory(options: DispatcherOptions): () => Dispatcher {
  const config = resolveConfig(options);
  return () => dispatcherOf(config);
}

function dispatcherOf(config: DispatcherConfig): Dispatcher {
  const grants = new GrantStore();
  for (const grant of config.grants) grants.add(grant);
  const p: Pipeline = {
    config,
    grants,
    approvals: new ApprovalLedger(),
    ledger: new BudgetLedger(config.budget, config.budgetUsage),
    classified: new WeakSet(),
  };
  const runBatch = (calls: unknown, ctx: unknown, approved: boolean) =>
    dispatchBatch(p, listOf(calls), readContext(ctx, config.context), approved);
  return {
    toolSpecs: () => config.specs,
    has: (name) => config.tools.has(name),
    get: (name) => config.tools.get(name),
    list: () => config.sorted,
    loopExemptTools: () => [...config.loopExempt],
    classify: (call, ctx) => classify(p, call, readContext(ctx, config.context), false),
    async execute(verdict, ctx) {
      const turn = readContext(ctx, config.context);
      if (turn.problem === undefined) return executeVerdict(p, verdict, turn);
      const { id, name } = idName(callOf(verdict));
      return errorResult(id, name, badContextText(name, turn.problem), 'internal');
    },
    dispatch: (calls, ctx) => runBatch(calls, ctx, false),
    executeApproved: async (calls, ctx) => (await runBatch(calls, ctx, true)).results,
    recordDecision(call: ToolCall, decision: ApprovalDecision | ParkedOutcome, ctx?: unknown): void {
      const turn = readContext(ctx, config.context);
      if (decision?.type !== 'approve') {
        const record = closingRecord(call, decision);
        p.approvals.drop(turn, call.id);
        emitRecords(config.onDecision, [record]);
        return;
      }
      // An approval that comes after the turn was cancelled approves nothing and grants nothing.
      if (turn.signal.aborted || turn.problem !== undefined) return;
      p.approvals.note(turn, call.id, approvalSource(decision));
      // "Approve and remember": the grant belongs to this turn, or to the session the caller named.
      if (decision.remember === 'session') grants.add({ scope: 'session' }, turn);
      else if (decision.remember === 'tool') grants.add({ scope: 'tool', tool: call.name }, turn);
    },
    grant: (grant, scope) => grants.add(grant, scope === undefined ? undefined : scopeOf(scope)),
    grants: (scope) => grants.list(scope === undefined ? undefined : scopeOf(scope)),
    budgetUsage: () => p.ledger.usage(),
  };
}

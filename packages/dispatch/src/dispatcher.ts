// The dispatcher: the validated configuration, the grant list and the budget ledger, and the
// pipeline (pipeline.ts) behind the methods of `Dispatcher`. Each method reads the caller's context
// once (context.ts) and releases it when its work is done; none of the running methods throws.

import type { ApprovalDecision, JsonObject, ToolCall } from '@turnkit/core';
import { BudgetLedger } from './budget.js';
import { resolveConfig } from './config.js';
import { badContextText, readContext, type Turn } from './context.js';
import { GrantList } from './grants.js';
import { classify, dispatchBatch, executeVerdict, type Pipeline } from './pipeline.js';
import { emitRecords, userDecisionRecord } from './records.js';
import { errorResult, idName } from './results.js';
import type { ApprovedVerdict, Dispatcher, DispatcherOptions, Verdict } from './types.js';

/** Runs `work` with the context read once, releasing the caller's cancellation afterwards. */
async function withTurn<T>(ctx: unknown, base: JsonObject, work: (turn: Turn) => Promise<T>): Promise<T> {
  const turn = readContext(ctx, base);
  try {
    return await work(turn);
  } finally {
    turn.release();
  }
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
  const config = resolveConfig(options);
  const grants = new GrantList();
  for (const grant of config.grants) grants.add(grant);
  const p: Pipeline = { config, grants, ledger: new BudgetLedger(config.budget, config.budgetUsage), classified: new WeakSet() };
  const runBatch = (calls: unknown, ctx: unknown, approved: boolean) => {
    const list = listOf(calls);
    return withTurn(ctx, config.context, (turn) => dispatchBatch(p, list, turn, approved));
  };
  return {
    toolSpecs: () => config.specs,
    has: (name) => config.tools.has(name),
    get: (name) => config.tools.get(name),
    list: () => config.sorted,
    loopExemptTools: () => [...config.loopExempt],
    classify: (call, ctx) => withTurn(ctx, config.context, (turn) => classify(p, call, turn, false)),
    execute: (verdict, ctx) =>
      withTurn(ctx, config.context, async (turn) => {
        if (turn.problem === undefined) return executeVerdict(p, verdict, turn);
        const { id, name } = idName(callOf(verdict));
        return errorResult(id, name, badContextText(name, turn.problem), 'internal');
      }),
    dispatch: (calls, ctx) => runBatch(calls, ctx, false),
    executeApproved: async (calls, ctx) => (await runBatch(calls, ctx, true)).results,
    recordDecision(call: ToolCall, decision: ApprovalDecision): void {
      const record = userDecisionRecord(call, decision);
      emitRecords(config.onDecision, [record]);
      // "Approve and remember": the grant the record names.
      if (record.source === 'user:remember_session') grants.add({ scope: 'session' });
      else if (record.source === 'user:remember_tool') grants.add({ scope: 'tool', tool: call.name });
    },
    grant: (grant) => grants.add(grant),
    grants: () => grants.list(),
    budgetUsage: () => p.ledger.usage(),
  };
}

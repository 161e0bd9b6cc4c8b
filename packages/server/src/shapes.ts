// What the store hands out, as zod schemas: core's TurnState, Message, Outcome and their parts,
// the store's inbox and journal entries, grants and watch events. The OpenAPI description is
// generated from them, and the checks at the end of this file fail to compile when one of them and
// the TypeScript type it describes disagree (a field added, removed, renamed or retyped).

import { z } from '@hono/zod-openapi';
import type {
  ApprovalDecision as CoreApprovalDecision,
  Message as CoreMessage,
  Notice as CoreNotice,
  Outcome as CoreOutcome,
  ParkedCall as CoreParkedCall,
  ToolCall as CoreToolCall,
  ToolResult as CoreToolResult,
  TurnError as CoreTurnError,
  TurnLimitsInput as CoreTurnLimitsInput,
  TurnState as CoreTurnState,
  TurnStatus,
} from '@turnkit/core';
import { TURN_STATUSES } from '@turnkit/core/internal';
import type {
  InboxEntry as StoreInboxEntry,
  StoredThread as StoreStoredThread,
  StoredTurn as StoreStoredTurn,
  ThreadSummary as StoreThreadSummary,
  TurnSummary as StoreTurnSummary,
  WatchEvent as StoreWatchEvent,
} from '@turnkit/store';

/** A turn's status (core's TurnStatus). */
export const Status = z.enum(TURN_STATUSES as [TurnStatus, ...TurnStatus[]]).openapi('TurnStatus');

/**
 * The schema or null. Not `.nullable()`: the OpenAPI generator drops the null of a nullable
 * reference to a named schema; a union keeps it (`anyOf: [{ $ref }, { type: 'null' }]`).
 */
const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
// Null is added where JSON is used (a reference to a schema that allows null, with null beside it,
// would match a null twice and fail a `oneOf`). An array's items are described as `{}` (any value,
// which in a JSON document is a JSON value): TypeScript generators cannot type an array of the
// schema itself (openapi-typescript's `components["schemas"]["Json"][]` is a circular type).
const JsonNotNull: z.ZodType<Exclude<Json, null>> = z
  .lazy(() =>
    z.union([
      z.boolean(),
      z.number(),
      z.string(),
      z.array(orNull(JsonNotNull)).openapi({ type: 'array', items: {} }),
      z.record(z.string(), orNull(JsonNotNull)),
    ]),
  )
  .openapi('Json', {
    description: 'Plain JSON other than null: a boolean, a number, a string, an array or an object of JSON values.',
  });
/** Plain JSON (core's JsonValue): null, a boolean, a finite number, a string, an array or an object of JSON values. */
export const JsonValue: z.ZodType<Json> = orNull(JsonNotNull);

/** A tool call as the model asked for it (core's ToolCall). */
export const ToolCall = z
  .object({
    id: z.string().openapi({
      description: "The call's id, unique in the turn (core derives `<id>~<n>` for a repeated or missing model id).",
    }),
    name: z.string(),
    input: JsonValue,
    inputError: z
      .string()
      .optional()
      .openapi({ description: 'The arguments were not valid JSON: `input` holds the raw text and this says why.' }),
    originalId: z.string().optional().openapi({ description: "The model's own id, when core gave the call another." }),
  })
  .openapi('ToolCall');

/** A tool's result as the model sees it (core's ToolResult). */
export const ToolResult = z
  .object({
    callId: z.string(),
    name: z.string(),
    output: JsonValue,
    isError: z.boolean(),
    errorKind: z
      .string()
      .optional()
      .openapi({ description: 'What kind of failure an error result reports (`invalid_input`, `denied`, `timeout`, …).' }),
    stop: z.object({ reason: z.string() }).optional().openapi({ description: 'An after-hook asked to end the turn.' }),
    modelOverride: z.string().optional().openapi({ description: 'The model for the next model call only.' }),
    get action() {
      return AgentAction.optional().openapi({
        description: 'What a `transfer_task`, `handoff` or `change_model` call asks core to do (docs/agents.md).',
      });
    },
  })
  .openapi('ToolResult');

/** A message of a turn's transcript (core's Message). */
export const Message = z
  .discriminatedUnion('role', [
    z.object({ role: z.literal('system'), content: z.string() }),
    z.object({ role: z.literal('user'), content: z.string() }),
    z.object({
      role: z.literal('assistant'),
      content: z.string(),
      toolCalls: z.array(ToolCall),
      reasoning: z.string().optional(),
    }),
    z.object({ role: z.literal('tool'), result: ToolResult }),
  ])
  .openapi('Message', { description: "A message of the conversation (core's Message)." });

/** Why a turn or a model call failed (core's TurnError). */
export const TurnError = z
  .object({
    kind: z.string().openapi({ example: 'model_error' }),
    message: z.string(),
    retryable: z.boolean().optional(),
    data: JsonValue.optional(),
  })
  .openapi('TurnError');

/** A decision as core and the store keep it (the request's `Decision` bounds the reason; this does not). */
export const ApprovalDecision = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('approve'), remember: z.enum(['session', 'tool']).optional() }),
    z.object({ type: z.literal('reject'), reason: z.string().optional() }),
  ])
  .openapi('ApprovalDecision');

/** A parked call with no decision yet. */
export const ParkedCall = z
  .object({
    call: ToolCall.openapi({ description: 'The call as the model sent it.' }),
    input: JsonValue.optional().openapi({
      description:
        "The input that runs if the call is approved (after the dispatcher's before-hooks); show this one. Always set in a stored turn.",
    }),
    reason: z.string().optional(),
    expiresAfterMs: z.number().int().optional().openapi({ description: 'How long a person has to decide (ms).' }),
    expiresAt: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'When the approval expires (epoch ms); then the call is rejected as expired.' }),
    agentPath: z
      .array(z.string())
      .optional()
      .openapi({ description: "In a multi-agent turn, the agents from the turn's own to the one whose call it is." }),
  })
  .openapi('ParkedCall');

/** How a turn ended (core's Outcome). */
export const Outcome = z
  .discriminatedUnion('status', [
    z.object({
      status: z.literal('stopped'),
      stopReason: z.enum(['completed', 'max_iterations', 'loop_detected', 'budget_exhausted', 'hook_stopped']),
      output: JsonValue,
    }),
    z.object({ status: z.literal('failed'), error: TurnError }),
    z.object({ status: z.literal('cancelled'), reason: z.string() }),
  ])
  .openapi('Outcome', { description: 'How the turn ended.' });

const count = z.number().int().min(0);
const TurnBudget = z
  .object({
    maxModelCalls: z.number().optional(),
    maxToolCalls: z.number().optional(),
    maxInputTokens: z.number().optional(),
    maxOutputTokens: z.number().optional(),
    maxTotalTokens: z.number().optional(),
    maxCost: z.number().optional(),
  })
  .openapi('TurnBudget');

const limits = {
  maxIterations: z.number(),
  loopThreshold: z.number(),
  loopExemptTools: z.array(z.string()),
  maxOutputRepairs: z.number(),
  maxCallsPerReply: z.number(),
  maxModelRetries: z.number(),
  modelRetryBackoffMs: z.number(),
  loopRecoveries: z.number(),
  budget: TurnBudget,
};
/** Limits a submit may set (core's TurnLimitsInput); the store checks their values (a bad one is a 400 naming it). */
export const TurnLimitsInput = z.object(limits).partial().strict().openapi('TurnLimitsInput');
const TurnLimits = z.object(limits).openapi('TurnLimits');

const TurnUsage = z
  .object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    totalTokens: z.number(),
    cost: z.number(),
    modelCalls: count,
    toolCalls: count,
  })
  .openapi('TurnUsage');

/** A turn's state as core keeps it (core's TurnState). */
export const TurnState = z
  .object({
    version: z.number().int(),
    id: z.string(),
    status: Status,
    limits: TurnLimits,
    round: count,
    usage: TurnUsage,
    forced: z.enum(['max_iterations', 'loop_detected']).nullable(),
    batch: z
      .object({
        calls: z.array(ToolCall),
        notExecuted: z.array(ToolResult),
        held: z.array(ToolResult),
        parked: z.array(ParkedCall),
        decisions: z.record(z.string(), ApprovalDecision),
      })
      .nullable()
      .openapi({ description: 'The tool batch in flight, or null.' }),
    lastBatch: z.array(z.object({ name: z.string(), input: JsonValue })).nullable(),
    repeats: count,
    repairs: count,
    recoveries: count,
    candidate: z.string().nullable(),
    nextModel: z.string().nullable(),
    lastRequest: z
      .object({
        iteration: count,
        final: z.boolean(),
        modelOverride: z.string().optional(),
        attempt: z.number().int().optional(),
        delayMs: z.number().optional(),
      })
      .nullable(),
    outcome: orNull(Outcome),
    callIds: z.object({ count, filter: z.string() }),
    get agents() {
      return orNull(TurnAgents);
    },
  })
  .openapi('TurnState', { description: "core's TurnState (docs/turn-contract.md)." });

/** What a runtime tool's result asks core to do (core's AgentAction). */
const AgentAction = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('transfer'), agent: z.string(), task: z.string(), limits: TurnLimitsInput }),
    z.object({ type: z.literal('handoff'), agent: z.string(), system: z.string().optional(), limits: TurnLimitsInput }),
    z.object({ type: z.literal('change_model'), model: z.string() }),
  ])
  .openapi('AgentAction');

/** A `transfer_task` call waiting for its child turn (core's Delegation). */
const Delegation = z
  .object({ callId: z.string(), agent: z.string(), task: z.string(), limits: TurnLimitsInput })
  .openapi('Delegation');

/** Who is active in a multi-agent turn, and the child turn it waits for (core's TurnAgents). */
const TurnAgents: z.ZodObject<{
  agent: z.ZodString;
  model: z.ZodNullable<z.ZodString>;
  delegations: z.ZodArray<typeof Delegation>;
  readonly child: z.ZodUnion<readonly [typeof TurnState, z.ZodNull]>;
}> = z
  .object({
    agent: z.string(),
    model: z.string().nullable(),
    delegations: z.array(Delegation),
    get child() {
      return orNull(TurnState);
    },
  })
  .openapi('TurnAgents');

/** A decision or cancel a turn received (the store's InboxEntry). */
export const InboxEntry = z
  .object({
    kind: z.enum(['decision', 'cancel']),
    callId: z
      .string()
      .nullable()
      .openapi({ description: "The call decided (decisions only; a child turn's call: its id in that child turn)." }),
    turn: z.string().optional().openapi({ description: 'For a decision on a call of a child turn: that child turn’s id.' }),
    decision: orNull(ApprovalDecision),
    reason: z.string().nullable().openapi({ description: 'Why the turn was cancelled (cancels only).' }),
    status: z.enum(['pending', 'applied', 'ignored']),
    createdAt: z.string(),
    appliedAt: z.string().nullable(),
  })
  .openapi('InboxEntry', { description: 'A decision or cancel the turn received.' });

/** One call of a turn's tool journal (the store's JournalEntry). */
export const JournalEntry = z
  .object({
    callId: z.string().openapi({ description: "The call's id (a child turn's call: its id in that child turn)." }),
    turn: z
      .string()
      .optional()
      .openapi({ description: 'For a call of a child turn (`transfer_task`): that child turn’s id (`<turn id>/<call id>`).' }),
    name: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    result: orNull(ToolResult),
  })
  .openapi('JournalEntry', { description: 'One call in the tool journal: started, then finished with its result.' });

/** What a thread's turns remembered (dispatch's Grant). */
export const Grant = z
  .union([
    z.object({ scope: z.literal('session') }),
    z.object({ scope: z.literal('tool'), tool: z.string() }),
    z.object({ scope: z.literal('tool'), pattern: z.string() }),
  ])
  .openapi('Grant', { description: 'What a turn remembered (`remember: session | tool`).' });

/** A notice core emitted (core's Notice). */
export const Notice = z
  .object({
    name: z.enum([
      'turn_started',
      'iteration',
      'steering',
      'awaiting_approval',
      'limit_reached',
      'ignored_event',
      'model_retry',
      'hook_blocked',
    ]),
    data: JsonValue,
  })
  .openapi('Notice');

/** A turn in a list of turns. */
export const TurnSummary = z
  .object({
    id: z.string(),
    agent: z.string(),
    thread: z.string().nullable(),
    status: Status,
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('TurnSummary');

/** A child turn of a turn of many agents (the store's StoredChildTurn). */
export const StoredChildTurn = z
  .object({
    id: z.string().openapi({ description: 'The child turn’s id: `<parent id>/<transfer_task call id>`.' }),
    agentPath: z.array(z.string()).openapi({ description: "The agents from the root turn's to this child's." }),
    transcript: z.array(Message).openapi({ description: "The child turn's messages (its system prompt is not stored)." }),
  })
  .openapi('StoredChildTurn', { description: 'A child turn (`transfer_task`), kept inside its parent turn.' });

/** A turn as `GET /api/turns/{id}` answers it (the store's StoredTurn). */
export const StoredTurn = z
  .object({
    id: z.string(),
    agent: z.string(),
    thread: z.string().nullable(),
    status: Status,
    input: z.string().nullable(),
    state: orNull(TurnState).openapi({ description: 'null before a worker took the turn, or when it cannot be read.' }),
    transcript: z.array(Message),
    parked: z.array(ParkedCall),
    decisions: z.array(InboxEntry).openapi({ description: 'Every decision and cancel received, in order.' }),
    toolCalls: z.array(JournalEntry),
    children: z
      .array(StoredChildTurn)
      .optional()
      .openapi({ description: 'A turn of many agents: its child turns, oldest first (absent when it has none).' }),
    outcome: orNull(Outcome),
    error: orNull(TurnError),
    createdAt: z.string(),
    updatedAt: z.string(),
    endedAt: z.string().nullable(),
  })
  .openapi('StoredTurn');

/** A thread in a list of threads. */
export const ThreadSummary = z
  .object({
    id: z.string(),
    agent: z.string(),
    status: z.enum(['open', 'closed']),
    turns: z.number().int().openapi({ description: 'How many turns it has.' }),
    current: z.string().nullable().openapi({ description: 'Its turn that has not ended and runs first.' }),
    createdAt: z.string(),
    closedAt: z.string().nullable(),
  })
  .openapi('ThreadSummary');

/** A thread as `GET /api/threads/{id}` answers it (the store's StoredThread). */
export const StoredThread = z
  .object({
    id: z.string(),
    agent: z.string(),
    status: z.enum(['open', 'closed']),
    turns: z.array(TurnSummary).openapi({ description: 'Its turns, oldest first.' }),
    transcript: z
      .array(Message)
      .openapi({ description: 'What its next model request starts from: the latest compaction and every message since.' }),
    current: z.string().nullable(),
    parked: z.array(ParkedCall).openapi({ description: 'The parked calls of `current`.' }),
    grants: z.array(Grant).openapi({ description: 'What its turns remembered.' }),
    closeReason: z.string().nullable(),
    createdAt: z.string(),
    closedAt: z.string().nullable(),
  })
  .openapi('StoredThread');

const seq = z.number().int().min(1).openapi({ description: "The event's place in the turn's history (the SSE id)." });
/** On a watch event of a child turn: which one, and the path of agents to it (the store's WatchChild). */
export const WatchChild = z
  .object({ turn: z.string(), agentPath: z.array(z.string()) })
  .openapi('WatchChild', { description: 'The child turn an event is of, and the agents from the root turn’s to it.' });
/** A watch event: a message was written. */
export const MessageEvent = z
  .object({ type: z.literal('message'), seq, message: Message, child: WatchChild.optional() })
  .openapi('MessageEvent', { description: "A message was written to the transcript (`child`: a child turn's)." });
/** A watch event: core emitted a notice. */
export const NoticeEvent = z
  .object({ type: z.literal('notice'), seq, notice: Notice, child: WatchChild.optional() })
  .openapi('NoticeEvent', { description: 'Core emitted a notice.' });
/** A watch event: the turn's status changed. */
export const StatusEvent = z
  .object({ type: z.literal('status'), seq, status: Status, outcome: orNull(Outcome) })
  .openapi('StatusEvent', { description: "The turn's status changed (with its outcome once it ended)." });
/** A turn's watch event: a message written, a notice, a status change. */
export const WatchEvent = z
  .discriminatedUnion('type', [MessageEvent, NoticeEvent, StatusEvent])
  .openapi('WatchEvent', { description: "What happened in a turn (the store's watch event)." });

// ---------------------------------------------------------------------------------------------
// The checks: each schema's data and the type it describes are assignable both ways (modulo
// `readonly`, and `undefined` on optional fields, which zod adds and JSON cannot carry).

/** The type with `readonly` dropped and no `undefined` on optional fields: JSON as it goes over the wire. */
export type Plain<T> = T extends readonly (infer I)[]
  ? Plain<I>[]
  : T extends object
    ? { -readonly [K in keyof T]: Plain<Exclude<T[K], undefined>> }
    : T;
/**
 * The store's data as the route schemas type it (the same value: the checks below keep every shape
 * equal to its type but for `readonly`, which a reply does not carry).
 */
export const asSent = <T>(value: T): Plain<T> => value as Plain<T>;

type Same<A, B> = [Plain<A>] extends [Plain<B>] ? ([Plain<B>] extends [Plain<A>] ? true : false) : false;
type Fits<Schema extends z.ZodType, T> = Same<z.output<Schema>, T>;

interface Checked {
  toolCall: [typeof ToolCall, CoreToolCall];
  toolResult: [typeof ToolResult, CoreToolResult];
  message: [typeof Message, CoreMessage];
  turnError: [typeof TurnError, CoreTurnError];
  decision: [typeof ApprovalDecision, CoreApprovalDecision];
  parked: [typeof ParkedCall, CoreParkedCall];
  outcome: [typeof Outcome, CoreOutcome];
  state: [typeof TurnState, CoreTurnState];
  limitsInput: [typeof TurnLimitsInput, CoreTurnLimitsInput];
  inbox: [typeof InboxEntry, StoreInboxEntry];
  journal: [typeof JournalEntry, StoreStoredTurn['toolCalls'][number]];
  grant: [typeof Grant, StoreStoredThread['grants'][number]];
  notice: [typeof Notice, CoreNotice];
  summary: [typeof TurnSummary, StoreTurnSummary];
  turn: [typeof StoredTurn, StoreStoredTurn];
  threadSummary: [typeof ThreadSummary, StoreThreadSummary];
  thread: [typeof StoredThread, StoreStoredThread];
  watch: [typeof WatchEvent, StoreWatchEvent];
}
/** Empty when every check passes; otherwise the compile error names the failing ones ("Property 'state' is missing"). */
const failing: { [K in keyof Checked as Fits<Checked[K][0], Checked[K][1]> extends true ? never : K]: 'differs' } = {};
void failing;

// The API's bodies and replies as zod schemas: requests are validated with them, the OpenAPI
// description is generated from them, and the tests check real replies against them.

import { z } from '@hono/zod-openapi';
import { TURN_STATUSES } from '@turnkit/core/internal';
import type { TurnStatus } from '@turnkit/core';

export const STATUSES = [...TURN_STATUSES];
export const TERMINAL: ReadonlySet<TurnStatus> = new Set(['stopped', 'failed', 'cancelled']);

const Id = z.string().regex(/^[A-Za-z0-9_.:@-]{1,200}$/, 'must be 1 to 200 letters, digits or _.:@-');
export const Status = z.enum(STATUSES as [TurnStatus, ...TurnStatus[]]).openapi('TurnStatus');

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'invalid_body' }),
      message: z.string().openapi({ example: 'body.agent: expected a string, got nothing.' }),
      field: z.string().optional().openapi({ description: 'The request field at fault, as a dotted path.' }),
    }),
  })
  .openapi('Error');

export const SubmitBody = z
  .object({
    agent: z.string().min(1).max(200).openapi({ example: 'support', description: 'An agent a worker registers.' }),
    input: z.string().max(100_000).optional().openapi({ example: 'Please refund order A-17.' }),
    id: Id.optional().openapi({ description: 'Default: turn_<uuid>. An id that exists is refused (409).' }),
    limits: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "Turn limits merged over the agent's (checked by the store; a bad one is a 400 naming it)." }),
    thread: Id.optional().openapi({
      example: 'customer-42',
      description: 'The thread the turn continues (a new thread when the id is new); its turns run one at a time.',
    }),
    whenBusy: z.enum(['wait', 'refuse']).optional().openapi({
      description:
        'With `thread`: queue behind a turn of the thread that has not ended (`wait`, the default), or answer 409 `thread_busy` (`refuse`).',
    }),
  })
  .strict()
  .openapi('SubmitTurn');

export const Submitted = z.object({ id: z.string() }).openapi('Submitted');

export const ListQuery = z.object({
  status: Status.optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional().openapi({ example: 50 }),
  cursor: z.string().max(100).optional(),
});

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

export const TurnPage = z.object({ turns: z.array(TurnSummary), cursor: z.string().nullable() }).openapi('TurnPage');

const Json = z.unknown().openapi({ description: 'Plain JSON as core defines it.' });
const ToolCall = z
  .object({
    id: z.string().openapi({
      description: "The call's id, unique in the turn (core derives `<id>~<n>` for a repeated or missing model id).",
    }),
    name: z.string(),
    input: Json,
    originalId: z.string().optional().openapi({ description: "The model's own id, when core gave the call another." }),
  })
  .openapi('ToolCall');

/** A parked call with no decision yet. */
const ParkedCall = z.object({
  call: ToolCall.openapi({ description: 'The call as the model sent it.' }),
  input: Json.openapi({
    description: "The input that runs if the call is approved (after the dispatcher's before-hooks); show this one.",
  }),
  reason: z.string().optional(),
  expiresAfterMs: z.number().int().optional().openapi({ description: 'How long a person has to decide (ms).' }),
  expiresAt: z
    .number()
    .int()
    .optional()
    .openapi({ description: 'When the approval expires (epoch ms); then the call is rejected as expired.' }),
});

export const StoredTurn = z
  .object({
    id: z.string(),
    agent: z.string(),
    thread: z.string().nullable(),
    status: Status,
    input: z.string().nullable(),
    state: Json.openapi({ description: "core's TurnState, or null before a worker took the turn" }),
    transcript: z.array(z.record(z.string(), z.unknown()).openapi({ description: "core's Message" })),
    parked: z.array(ParkedCall),
    decisions: z.array(z.record(z.string(), z.unknown()).openapi({ description: 'an inbox entry' })),
    toolCalls: z.array(z.record(z.string(), z.unknown()).openapi({ description: 'a tool journal entry' })),
    outcome: Json,
    error: z.object({ kind: z.string(), message: z.string() }).passthrough().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    endedAt: z.string().nullable(),
  })
  .openapi('StoredTurn');

export const Decision = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('approve'), remember: z.enum(['session', 'tool']).optional() }).strict(),
    z.object({ type: z.literal('reject'), reason: z.string().max(2000).optional() }).strict(),
  ])
  .openapi('Decision');

export const DecideBody = z
  .object({
    decisions: z.record(z.string().min(1).max(256), Decision).openapi({ example: { call_1: { type: 'approve' } } }),
  })
  .strict()
  .openapi('Decide');

export const Decided = z.object({ accepted: z.array(z.string()), ignored: z.array(z.string()) }).openapi('Decided', {
  description:
    'The calls decided: `accepted` lists every call given. `ignored` is always empty (a call with a decision already is answered 409 `already_decided`).',
});

export const CancelBody = z
  .object({ reason: z.string().max(2000).optional() })
  .strict()
  .openapi('Cancel');
export const Cancelled = z.object({ cancelled: z.boolean() }).openapi('Cancelled');

export const TurnParams = z.object({ id: Id.openapi({ param: { name: 'id', in: 'path' }, example: 'turn_1' }) });
export const EventsQuery = z.object({ after: z.coerce.number().int().min(0).optional() });

export const ThreadParams = z.object({ id: Id.openapi({ param: { name: 'id', in: 'path' }, example: 'customer-42' }) });

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

export const ThreadPage = z.object({ threads: z.array(ThreadSummary), cursor: z.string().nullable() }).openapi('ThreadPage');

export const ThreadQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional().openapi({ example: 50 }),
  cursor: z.string().max(200).optional(),
});

export const StoredThread = z
  .object({
    id: z.string(),
    agent: z.string(),
    status: z.enum(['open', 'closed']),
    turns: z.array(TurnSummary).openapi({ description: 'Its turns, oldest first.' }),
    transcript: z
      .array(z.record(z.string(), z.unknown()).openapi({ description: "core's Message" }))
      .openapi({ description: 'What its next model request starts from: the latest compaction and every message since.' }),
    current: z.string().nullable(),
    parked: z.array(ParkedCall).openapi({ description: 'The parked calls of `current`.' }),
    grants: z.array(z.record(z.string(), z.unknown())).openapi({ description: 'What its turns remembered.' }),
    closeReason: z.string().nullable(),
    createdAt: z.string(),
    closedAt: z.string().nullable(),
  })
  .openapi('StoredThread');

export const CloseBody = z
  .object({ reason: z.string().max(2000).optional() })
  .strict()
  .openapi('CloseThread');
export const Closed = z.object({ closed: z.boolean() }).openapi('Closed');

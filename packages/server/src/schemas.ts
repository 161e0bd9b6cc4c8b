// The API's bodies and replies as zod schemas: requests are validated with them, the OpenAPI
// description is generated from them, and the tests check real replies against them.

import { z } from '@hono/zod-openapi';
import { TURN_STATUSES } from '@turnkit/core/internal';
import type { TurnStatus } from '@turnkit/core';
import { MessageEvent, NoticeEvent, Status, StatusEvent, ThreadSummary, TurnLimitsInput, TurnSummary } from './shapes.js';

export { Status, StoredThread, StoredTurn, WatchEvent } from './shapes.js';
export const STATUSES = [...TURN_STATUSES];
export const TERMINAL: ReadonlySet<TurnStatus> = new Set(['stopped', 'failed', 'cancelled']);

const Id = z.string().regex(/^[A-Za-z0-9_.:@-]{1,200}$/, 'must be 1 to 200 letters, digits or _.:@-');

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
    limits: TurnLimitsInput.optional().openapi({
      description: "Turn limits merged over the agent's (the store checks their values; a bad one is a 400 naming it).",
    }),
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

export const TurnPage = z.object({ turns: z.array(TurnSummary), cursor: z.string().nullable() }).openapi('TurnPage');

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
export const EventsQuery = z.object({
  after: z.coerce.number().int().min(0).optional().openapi({
    type: 'integer',
    description: 'Start after this seq (default: the Last-Event-ID header, else 0: the whole history).',
  }),
});
/** The headers the event stream reads (a browser's reconnect). */
export const EventsHeaders = z.object({
  'last-event-id': z
    .string()
    .optional()
    .openapi({ description: "The last seq a reader saw (a browser's EventSource sends it on reconnect); `after` wins." }),
});

const sseId = z.string().openapi({ description: "The event's seq, as text." });
/**
 * One server-sent event of a turn's stream, as its fields: `event`, `id` and `data` (the JSON of
 * the schema shown, on one line). The stream ends with `end`, or `error` when the server fails.
 */
export const TurnStreamEvent = z
  .discriminatedUnion('event', [
    z.object({ event: z.literal('message'), id: sseId, data: MessageEvent }),
    z.object({ event: z.literal('notice'), id: sseId, data: NoticeEvent }),
    z.object({ event: z.literal('status'), id: sseId, data: StatusEvent }),
    z.object({ event: z.literal('end'), data: z.object({}).strict() }),
    z.object({ event: z.literal('error'), data: z.object({ message: z.string() }) }),
  ])
  .openapi('TurnStreamEvent', {
    description:
      'One server-sent event of the stream: its `event` and `id` fields, and its `data` line (JSON of the schema shown). The stream ends with `end`, or with `error` when the server failed.',
  });

const placeId = z.string().openapi({ description: "The event's place in the thread's stream (from 1), as text." });
const ofTurn = { turnId: z.string().openapi({ description: 'The turn of the thread the event belongs to.' }) };
/**
 * One server-sent event of a thread's stream: a turn's watch event with its `turnId`, numbered by
 * its place in the thread's stream. The stream ends with `end`, or `error` when the server fails.
 */
export const ThreadStreamEvent = z
  .discriminatedUnion('event', [
    z.object({ event: z.literal('message'), id: placeId, data: MessageEvent.extend(ofTurn).openapi('ThreadMessageEvent') }),
    z.object({ event: z.literal('notice'), id: placeId, data: NoticeEvent.extend(ofTurn).openapi('ThreadNoticeEvent') }),
    z.object({ event: z.literal('status'), id: placeId, data: StatusEvent.extend(ofTurn).openapi('ThreadStatusEvent') }),
    z.object({ event: z.literal('end'), data: z.object({}).strict() }),
    z.object({ event: z.literal('error'), data: z.object({ message: z.string() }) }),
  ])
  .openapi('ThreadStreamEvent', {
    description:
      "One server-sent event of a thread's stream: its `event` and `id` fields, and its `data` line (JSON of the schema shown). The stream ends with `end` once the thread is closed and its last turn ended, or with `error` when the server failed.",
  });

export const ThreadParams = z.object({ id: Id.openapi({ param: { name: 'id', in: 'path' }, example: 'customer-42' }) });

export const ThreadPage = z.object({ threads: z.array(ThreadSummary), cursor: z.string().nullable() }).openapi('ThreadPage');

export const ThreadQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional().openapi({ example: 50 }),
  cursor: z.string().max(200).optional(),
});

export const CloseBody = z
  .object({ reason: z.string().max(2000).optional() })
  .strict()
  .openapi('CloseThread');
export const Closed = z.object({ closed: z.boolean() }).openapi('Closed');

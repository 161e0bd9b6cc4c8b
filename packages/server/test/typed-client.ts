// The program a user writes against the served OpenAPI description with openapi-typescript's
// types and openapi-fetch (test/openapi.test.ts type-checks it strict, then runs it): every route,
// the fields of a turn and a thread read with their types, no cast.

import ts from 'typescript';

/** What a user writes: every route, the fields of a turn and a thread read with their types. */
export const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Turn = components['schemas']['StoredTurn'];
export interface Reply {
  readonly operation: string;
  readonly status: number;
  readonly body: unknown;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function exercise(url: string, token: string): Promise<{ replies: Reply[]; summary: string[]; turn: string }> {
  const client = createClient<paths>({ baseUrl: url + '/api', headers: { authorization: 'Bearer ' + token } });
  const replies: Reply[] = [];
  const keep = (operation: string, r: { response: Response; data?: unknown; error?: unknown }) => {
    replies.push({ operation, status: r.response.status, body: r.data ?? r.error });
  };
  const summary: string[] = [];

  const submitted = await client.POST('/turns', { body: { agent: 'support', input: 'Refund order O-1, 3 EUR.', thread: 'typed-1' } });
  keep('submitTurn', submitted);
  if (submitted.data === undefined) throw new Error('submit failed: ' + JSON.stringify(submitted.error));
  const id: string = submitted.data.id;
  const path = { params: { path: { id } } };

  let parked: Turn | undefined;
  while (parked?.status !== 'awaiting_approval') {
    await pause(20);
    parked = (await client.GET('/turns/{id}', path)).data;
  }
  const call = parked.parked[0];
  if (call === undefined) throw new Error('nothing parked');
  const shown = call.input;
  summary.push('parked ' + call.call.name + ' ' + JSON.stringify(shown));
  const batch = parked.state?.batch;
  summary.push('batch parked ' + String(batch?.parked.length));

  const decided = await client.POST('/turns/{id}/decisions', {
    ...path,
    body: { decisions: { [call.call.id]: { type: 'approve' } } },
  });
  keep('decideCalls', decided);
  summary.push('accepted ' + (decided.data?.accepted.join(',') ?? ''));

  let ended: Turn | undefined;
  while (ended?.endedAt == null) {
    await pause(20);
    const got = await client.GET('/turns/{id}', path);
    ended = got.data;
    if (ended?.endedAt != null) keep('getTurn', got);
  }
  const outcome = ended.outcome;
  summary.push('outcome ' + (outcome?.status === 'stopped' ? outcome.stopReason + ' ' + JSON.stringify(outcome.output) : String(outcome?.status)));
  for (const message of ended.transcript) {
    if (message.role === 'tool') summary.push('tool ' + message.result.name + ' ' + String(message.result.isError));
    else if (message.role === 'assistant') summary.push('assistant calls ' + message.toolCalls.map((c) => c.name).join(','));
    else summary.push(message.role + ' ' + message.content);
  }
  for (const entry of ended.decisions) summary.push('decision ' + entry.kind + ' ' + String(entry.decision?.type) + ' ' + entry.status);
  for (const entry of ended.toolCalls) summary.push('journal ' + entry.name + ' ' + String(entry.result?.isError));
  const usage = ended.state?.usage;
  summary.push('model calls ' + String(usage?.modelCalls));

  const events = await client.GET('/turns/{id}/events', { params: { path: { id }, query: { after: 0 } }, parseAs: 'text' });
  replies.push({ operation: 'streamTurn', status: events.response.status, body: events.data });

  keep('listTurns', await client.GET('/turns', { params: { query: { limit: 2, status: 'stopped' } } }));
  keep('cancelTurn', await client.POST('/turns/{id}/cancel', path));
  const missing = await client.GET('/turns/{id}', { params: { path: { id: 'turn_none' } } });
  keep('getTurn', missing);
  summary.push('missing ' + (missing.error?.error.code ?? ''));

  keep('listThreads', await client.GET('/threads', { params: { query: { limit: 5 } } }));
  const thread = await client.GET('/threads/{id}', { params: { path: { id: 'typed-1' } } });
  keep('getThread', thread);
  summary.push('thread turns ' + String(thread.data?.turns.length) + ' grants ' + String(thread.data?.grants.length));
  keep('closeThread', await client.POST('/threads/{id}/close', { params: { path: { id: 'typed-1' } } }));
  // Closed, and its one turn ended: the thread's stream gives its history, then ends.
  const threadEvents = await client.GET('/threads/{id}/events', { params: { path: { id: 'typed-1' }, query: { after: 0 } }, parseAs: 'text' });
  replies.push({ operation: 'streamThread', status: threadEvents.response.status, body: threadEvents.data });
  return { replies, summary, turn: id };
}
`;

/** The casts a program holds: `x as T`, `<T>x`, `x!`. */
export function casts(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node))
      found.push(node.getText(source));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

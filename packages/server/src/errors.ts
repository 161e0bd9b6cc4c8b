// The API's error replies: `{ error: { code, message, field? } }` with a 4xx status. Messages name
// the bad value and say what to do; they never echo the Authorization header.

import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';

export interface ApiError {
  readonly code: string;
  readonly message: string;
  readonly field?: string;
}

export function errorReply<S extends ContentfulStatusCode>(c: Context, status: S, error: ApiError) {
  return c.json({ error }, status);
}

/** The first zod issue as an error naming the field (`body.agent`, `query.limit`, …). */
export function validationError(target: string, error: z.ZodError): ApiError {
  const where = target === 'json' ? 'body' : target === 'param' ? 'path' : target;
  const issue = error.issues[0];
  const path = [where, ...(issue?.path ?? []).map(String)].join('.');
  const field = issue?.code === 'unrecognized_keys' ? `${path}.${issue.keys.join(', ')}` : path;
  const message =
    issue?.code === 'unrecognized_keys'
      ? `${field}: unknown field; remove it (see /api/openapi.json for the fields this route takes).`
      : `${path}: ${issue?.message ?? 'invalid'}.`;
  return { code: `invalid_${where}`, message, field };
}

/** A store call's error that is the caller's fault (the store throws RangeError or TypeError for bad options), else rethrown. */
export function callerError(error: unknown): ApiError {
  if (error instanceof RangeError || error instanceof TypeError) return { code: 'invalid_request', message: error.message };
  throw error;
}

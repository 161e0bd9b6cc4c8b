// The trace context a suspended turn carries to the process that resumes it: a W3C traceparent
// (and tracestate), plain JSON, written next to the turn's state. It is read back as untrusted
// input (a file, a database row): anything malformed is refused with a reason, never thrown.

import { isSpanContextValid, type SpanContext, TraceFlags, createTraceState } from '@opentelemetry/api';

/** What to save with a suspended turn (as JSON) and pass back as `link` when resuming it. */
export interface SavedTraceContext {
  /** W3C `traceparent`: `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
  readonly traceparent: string;
  /** W3C `tracestate`, when the span had one. */
  readonly tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The saved form of a span's context. */
export function saveTraceContext(context: SpanContext): SavedTraceContext {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${context.traceId}-${context.spanId}-${flags}`;
  const tracestate = context.traceState?.serialize();
  return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/** A saved context read back: the span context, or why it cannot be used. */
export function readTraceContext(
  value: unknown,
): { readonly ok: true; readonly context: SpanContext } | { readonly ok: false; readonly reason: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, reason: `a saved trace context must be an object { traceparent }, got ${describe(value)}` };
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return { ok: false, reason: `traceparent must be a string, got ${describe(traceparent)}` };
  const match = TRACEPARENT.exec(traceparent);
  if (match === null)
    return { ok: false, reason: `traceparent ${JSON.stringify(traceparent.slice(0, 80))} is not 00-<32 hex>-<16 hex>-<2 hex>` };
  if (tracestate !== undefined && (typeof tracestate !== 'string' || tracestate.length > 512))
    return { ok: false, reason: 'tracestate must be a string of at most 512 characters' };
  const context: SpanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(tracestate === undefined ? {} : { traceState: createTraceState(tracestate) }),
  };
  if (!isSpanContextValid(context)) return { ok: false, reason: `traceparent ${traceparent} has an all-zero trace or span id` };
  return { ok: true, context };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
}

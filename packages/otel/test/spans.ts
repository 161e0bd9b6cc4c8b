// A real OpenTelemetry SDK tracer whose spans land in an in-memory exporter, and helpers to read
// them back by name and parent.
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Recorder {
  readonly tracer: ReturnType<BasicTracerProvider['getTracer']>;
  spans(): readonly ReadableSpan[];
  /** The one span with this name (fails when there are none or several). */
  one(name: string): ReadableSpan;
  named(name: string): readonly ReadableSpan[];
  /** The spans whose parent is `span`, in the order they ended. */
  children(span: ReadableSpan): readonly ReadableSpan[];
}

export function recorder(): Recorder {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const spans = (): readonly ReadableSpan[] => exporter.getFinishedSpans();
  const named = (name: string): readonly ReadableSpan[] => spans().filter((s) => s.name === name);
  return {
    tracer: provider.getTracer('turnkit-test'),
    spans,
    named,
    one(name) {
      const found = named(name);
      if (found.length !== 1)
        throw new Error(
          `expected one span '${name}', found ${found.length}: ${spans()
            .map((s) => s.name)
            .join(', ')}`,
        );
      return found[0] as ReadableSpan;
    },
    children(span) {
      return spans().filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId);
    },
  };
}

/** A finished span as a child process prints it (JSON) for the test that spawned it. */
export interface ChildSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  attributes: Record<string, unknown>;
}

export function childSpans(spans: readonly ReadableSpan[]): ChildSpan[] {
  return spans.map((s) => ({
    name: s.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId ?? null,
    links: s.links.map((l) => ({
      traceId: l.context.traceId,
      spanId: l.context.spanId,
      attributes: l.attributes as Record<string, unknown>,
    })),
    attributes: s.attributes as Record<string, unknown>,
  }));
}

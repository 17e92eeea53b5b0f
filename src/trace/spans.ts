/**
 * The spans the bot makes, through OpenTelemetry's API alone: without a registered SDK (tracing
 * off, or the directory client used as a library without one) each is the API's no-op and costs
 * a function call. ops/tracing.ts starts the SDK when the configuration asks for it.
 *
 * OpenTelemetry traces, off unless the standard variables configure them: `OTEL_TRACES_EXPORTER`
 * (`otlp`, or `none`), `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (an
 * endpoint alone turns them on), `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER` and its `_ARG`,
 * `OTEL_SDK_DISABLED`. The SDK and its exporter (OTLP over HTTP, JSON) are loaded only then; with
 * tracing off, every span below is OpenTelemetry's no-op and costs a function call.
 *
 * What is traced: an interaction (its handler's whole run), each store statement, each directory
 * request with the rate limiter's wait as a span of its own, each request to Discord's REST API;
 * background work (a reminder posted, an event announced, a statistics post) in traces of its own,
 * linked to the trace that stored it (its `traceparent` rides on the stored row, so the link holds
 * across hosts). Span attributes are route templates, ids of Discord objects and outcomes: never a
 * token, a webhook key, a URL as sent or a message's text (tested).
 */
import {
  type Attributes,
  context,
  INVALID_SPAN_CONTEXT,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';

export const tracer = trace.getTracer('directory-bot');

/** Whether an SDK was started (ops/tracing-sdk.ts says so): until then the helpers do nothing. */
let on = false;

/** Called by the SDK once it is registered. */
export function tracingStarted(): void {
  on = true;
}

/** The span handed to work done while tracing is off: it takes attributes and records nothing. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export { type Span, SpanKind };

/**
 * Runs `fn` in a new active span, ended when it settles: an error is recorded on it and thrown
 * on. `fn` may set attributes of its outcome on the span.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; root?: boolean },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  // Tracing off: not even the API's no-op span is made.
  if (!on) return fn(NO_SPAN);
  return traced(name, options, fn);
}

async function traced<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; root?: boolean },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.root ? ROOT_CONTEXT : context.active();
  const span = tracer.startSpan(
    name,
    {
      ...(options.kind === undefined ? {} : { kind: options.kind }),
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links && options.links.length > 0 ? { links: options.links } : {}),
      ...(options.root ? { root: true } : {}),
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** A span for work timed already (a store statement Kysely timed): from `endMs - durationMs` to `endMs`. */
export function recordSpan(
  name: string,
  attributes: Attributes,
  timing: { endMs: number; durationMs: number; failed: boolean },
): void {
  if (!on) return;
  const span = tracer.startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes,
    startTime: timing.endMs - timing.durationMs,
  });
  if (timing.failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(timing.endMs);
}

/** The error's class name: what a span may say of a failure (a message can carry anything). */
function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

/**
 * The active span's W3C `traceparent`, to keep on a stored row, so work done later (by any host)
 * links back to this trace; null when there is no sampled span (tracing off).
 */
export function currentTraceParent(): string | null {
  if (!on) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const value = carrier.traceparent;
  return value && value.length <= 64 ? value : null;
}

/** A link to the trace a stored `traceparent` names; none when it is missing or malformed. */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (!on || !traceparent) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

/** For every log line: the active sampled span's trace and span ids (nothing with tracing off). */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || (spanContext.traceFlags & TraceFlags.SAMPLED) === 0) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

const SNOWFLAKE_SEGMENT = /\/\d{15,21}(?=\/|$)/g;
/** An interaction's or a webhook's token follows its id in these routes. */
const TOKEN_AFTER = /\/(webhooks|interactions)\/(\{id\})\/[^/]+/g;

/**
 * A Discord API path as a route template: the `/api/v10` prefix dropped, ids become `{id}`,
 * interaction and webhook tokens `{token}`, the query is dropped. What a span may say of a request to Discord.
 */
export function discordRouteTemplate(path: string): string {
  const bare = (path.split('?')[0] ?? '').replace(/^\/api(\/v\d+)?(?=\/)/, '').replace(/%40/gi, '@');
  return bare.replace(SNOWFLAKE_SEGMENT, '/{id}').replace(TOKEN_AFTER, '/$1/$2/{token}');
}

/** Adds attributes (an outcome) to the active span; nothing with tracing off. */
export function annotate(attributes: Attributes): void {
  if (!on) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

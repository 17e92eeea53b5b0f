/**
 * OpenTelemetry's SDK, started when the configuration turns tracing on (config/env.ts): a tracer
 * provider with the configured sampler, its spans batched to the OTLP/HTTP endpoint (JSON), the
 * AsyncLocalStorage context manager and W3C trace context. Imported only then (ops/tracing.ts's
 * `startTracing`), so a bot without tracing loads none of it.
 *
 * Requests to Discord's REST API are seen through undici's diagnostics channels (discord.js hands
 * its requests to undici): a span from the request's creation to its last byte or its error,
 * named by the route template, for the requests to Discord's origin only (the directory's have
 * spans of their own, with the rate limiter's wait).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config/env.js';
import type { Logger } from '../log/logger.js';
import { discordRouteTemplate, tracer, tracingStarted } from '../trace/spans.js';

export interface TracingSdk {
  /** Sends what is batched and stops (bounded by the exporter's own timeout). */
  shutdown(): Promise<void>;
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.ratio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** undici's request as its diagnostics channels give it (the fields read here). */
interface UndiciRequest {
  origin?: unknown;
  method?: unknown;
  path?: unknown;
}

/** Spans for the requests to `origins` (Discord's REST), from undici's diagnostics channels. */
function traceDiscordRequests(origins: ReadonlySet<string>): () => void {
  const spans = new WeakMap<object, Span>();
  const onCreate = (message: unknown): void => {
    const request = (message as { request?: UndiciRequest }).request;
    if (!request || typeof request.origin !== 'string' || !origins.has(new URL(request.origin).origin))
      return;
    const method = typeof request.method === 'string' ? request.method : 'GET';
    const template = discordRouteTemplate(typeof request.path === 'string' ? request.path : '/');
    spans.set(
      request,
      tracer.startSpan(`discord ${method} ${template}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          'url.template': template,
          'server.address': new URL(request.origin).hostname,
        },
      }),
    );
  };
  const onHeaders = (message: unknown): void => {
    const { request, response } = message as { request: object; response?: { statusCode?: number } };
    const span = spans.get(request);
    const status = response?.statusCode;
    if (!span || typeof status !== 'number') return;
    span.setAttribute('http.response.status_code', status);
    if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
  };
  const onEnd = (message: unknown): void => {
    const { request, error } = message as { request: object; error?: unknown };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    if (error !== undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    }
    span.end();
  };
  const channels: Array<[string, (message: unknown) => void]> = [
    ['undici:request:create', onCreate],
    ['undici:request:headers', onHeaders],
    ['undici:request:trailers', onEnd],
    ['undici:request:error', onEnd],
  ];
  // A subscriber's throw would reach the process as an uncaught exception: none may leave here.
  const guarded = channels.map(([name, listener]): [string, (message: unknown) => void] => [
    name,
    (message) => {
      try {
        listener(message);
      } catch {
        // A span not made is not worth a request.
      }
    },
  ]);
  for (const [name, listener] of guarded) subscribe(name, listener);
  return () => {
    for (const [name, listener] of guarded) unsubscribe(name, listener);
  };
}

export interface TracingOptions {
  /** The host's name (HOST_ID): the spans' `service.instance.id`. */
  hostId: string;
  /** Discord's REST origins (the API, the REST proxy): their requests get spans. */
  discordOrigins: readonly string[];
  logger: Logger;
}

export function startTracingSdk(config: TracingConfig, options: TracingOptions): TracingSdk {
  const resource = resourceFromAttributes({
    'service.name': config.serviceName,
    'service.instance.id': options.hostId,
    // OTEL_RESOURCE_ATTRIBUTES (and OTEL_SERVICE_NAME from the process's environment) win.
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint }))],
  });
  provider.register();
  tracingStarted();
  const stopDiscord = traceDiscordRequests(new Set(options.discordOrigins.map((o) => new URL(o).origin)));
  options.logger.info(
    {
      endpoint: new URL(config.endpoint).host,
      sampler: config.sampler,
      ratio: config.ratio,
      service: config.serviceName,
    },
    'tracing on: spans go to the OTLP endpoint',
  );
  return {
    async shutdown() {
      stopDiscord();
      await provider.shutdown().catch((err: unknown) => {
        options.logger.warn({ err }, 'could not send the last spans');
      });
    },
  };
}

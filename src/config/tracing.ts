/**
 * OpenTelemetry's own variables (ops/tracing.ts starts the SDK from what they say), read with the
 * others so that a slip is told at start: the exporter (`otlp` or `none`), the OTLP endpoint, the
 * service's name, the sampler and its ratio, and OTEL_SDK_DISABLED.
 */
import { flag, httpUrl, oneOf, optionalText, variable } from './variables.js';

/** OpenTelemetry's samplers (`OTEL_TRACES_SAMPLER`); the ratio ones take `OTEL_TRACES_SAMPLER_ARG`. */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export const TRACING_VARIABLES = {
  OTEL_SDK_DISABLED: flag(),
  OTEL_TRACES_EXPORTER: variable(undefined, (value, fail) =>
    ['otlp', 'none'].includes(value.toLowerCase())
      ? (value.toLowerCase() as 'otlp' | 'none')
      : fail('tracesExporter'),
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: variable(undefined, httpUrl),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: variable(undefined, httpUrl),
  OTEL_SERVICE_NAME: optionalText,
  OTEL_TRACES_SAMPLER: oneOf(SAMPLERS, 'parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: variable(undefined, (value, fail) => {
    const n = Number(value);
    return value !== '' && Number.isFinite(n) && n >= 0 && n <= 1 ? n : fail('samplerRatio');
  }),
};

/** The variables as parsed. */
interface TracingVariables {
  OTEL_SDK_DISABLED: boolean;
  OTEL_TRACES_EXPORTER: 'otlp' | 'none' | undefined;
  OTEL_EXPORTER_OTLP_ENDPOINT: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string | undefined;
  OTEL_SERVICE_NAME: string | undefined;
  OTEL_TRACES_SAMPLER: (typeof SAMPLERS)[number];
  OTEL_TRACES_SAMPLER_ARG: number | undefined;
}

export interface TracingConfig {
  /** Where the spans go (OTLP over HTTP, JSON): the traces endpoint, or the endpoint's /v1/traces. */
  endpoint: string;
  serviceName: string;
  sampler: (typeof SAMPLERS)[number];
  /** The ratio of the `traceidratio` samplers (1 when unset). */
  ratio: number;
}

/**
 * OpenTelemetry's rules for the trace exporter: off with OTEL_SDK_DISABLED or `none`, on with
 * `otlp`, and unset, on when an OTLP endpoint is given.
 */
function tracingOn(e: TracingVariables): boolean {
  if (e.OTEL_SDK_DISABLED || e.OTEL_TRACES_EXPORTER === 'none') return false;
  if (e.OTEL_TRACES_EXPORTER === 'otlp') return true;
  return e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined || e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
}

/** Where and how spans go; undefined when tracing is off. */
export function tracingConfig(e: TracingVariables): TracingConfig | undefined {
  if (!tracingOn(e)) return undefined;
  return {
    endpoint:
      e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      `${(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`,
    serviceName: e.OTEL_SERVICE_NAME ?? 'directory-bot',
    sampler: e.OTEL_TRACES_SAMPLER,
    ratio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}

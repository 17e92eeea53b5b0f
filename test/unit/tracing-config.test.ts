/**
 * Traces are off unless OpenTelemetry's standard variables turn them on (config/tracing.ts), a slip
 * in them is told at start like any other variable, and what a span may say of a request to
 * Discord is a route template: no id, no interaction or webhook token (trace/spans.ts).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import {
  currentTraceParent,
  discordRouteTemplate,
  inSpan,
  linkTo,
  traceFields,
} from '../../src/trace/spans.js';

describe('tracing configuration', () => {
  it('is off by default, and with none or OTEL_SDK_DISABLED even beside an endpoint', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
  });

  it('is on with an endpoint (its /v1/traces), a traces endpoint as given, or otlp and the default', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'directory-bot',
      sampler: 'parentbased_always_on',
      ratio: 1,
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/custom',
        OTEL_SERVICE_NAME: 'bot-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      }).tracing,
    ).toEqual({
      endpoint: 'https://otlp.example.com/custom',
      serviceName: 'bot-eu',
      sampler: 'parentbased_traceidratio',
      ratio: 0.1,
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'OTLP' }).tracing?.endpoint).toBe(
      'http://localhost:4318/v1/traces',
    );
  });

  it('tells a slip in the variables at start, with the others', () => {
    let error: unknown;
    try {
      loadConfig({
        OTEL_TRACES_EXPORTER: 'jaeger',
        OTEL_TRACES_SAMPLER: 'sometimes',
        OTEL_TRACES_SAMPLER_ARG: '10%',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, problems } = error as ConfigError;
    expect(problems).toHaveLength(4);
    expect(message).toContain('OTEL_TRACES_EXPORTER: expected otlp or none');
    expect(message).toContain('OTEL_TRACES_SAMPLER: expected one of always_on, always_off, traceidratio');
    expect(message).toContain('OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1');
    expect(message).toContain('OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL');
  });
});

describe('spans without an SDK (tracing off)', () => {
  it('run the work, keep no trace, and say nothing in the logs', async () => {
    expect(await inSpan('work', {}, async (span) => (span.isRecording() ? 'recorded' : 'done'))).toBe('done');
    expect(currentTraceParent()).toBeNull();
    expect(traceFields()).toEqual({});
  });

  it('link nothing, whatever a row stored (test/ops/tracing.test.ts links, with the SDK)', () => {
    expect(linkTo('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toEqual([]);
    expect(linkTo(null)).toEqual([]);
    expect(linkTo('not a traceparent')).toEqual([]);
  });
});

describe("a Discord request's route template", () => {
  it('drops the API prefix and the query, and hides ids and tokens', () => {
    const token = 'aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OTpzZWNyZXQ';
    expect(
      discordRouteTemplate(`/api/v10/webhooks/123456789012345678/${token}/messages/%40original?wait=true`),
    ).toBe('/webhooks/{id}/{token}/messages/@original');
    expect(discordRouteTemplate(`/api/v10/interactions/123456789012345678/${token}/callback`)).toBe(
      '/interactions/{id}/{token}/callback',
    );
    expect(discordRouteTemplate('/api/v10/channels/123456789012345678/messages')).toBe(
      '/channels/{id}/messages',
    );
    expect(discordRouteTemplate('/api/v10/guilds/123456789012345678/members/223456789012345678')).toBe(
      '/guilds/{id}/members/{id}',
    );
    expect(discordRouteTemplate('/api/v10/gateway/bot')).toBe('/gateway/bot');
  });
});

/**
 * Starts OpenTelemetry's SDK (ops/tracing-sdk.ts) when the configuration turns tracing on
 * (config/env.ts, the standard OTEL_* variables); loads nothing of it otherwise. The spans
 * themselves are made through the API (trace/spans.ts).
 */
import type { Config, TracingConfig } from '../config/env.js';
import type { Logger } from '../log/logger.js';
import type { TracingOptions, TracingSdk } from './tracing-sdk.js';

/** The SDK, loaded and started when tracing is configured; undefined when it is off. */
export async function startTracing(
  config: TracingConfig | undefined,
  options: TracingOptions,
): Promise<TracingSdk | undefined> {
  if (!config) return undefined;
  const { startTracingSdk } = await import('./tracing-sdk.js');
  return startTracingSdk(config, options);
}

/** What the SDK needs of the configuration: the host's name, and Discord's REST origins. */
export function tracingOptions(config: Config, logger: Logger): TracingOptions {
  const { apiUrl, restProxyUrl } = config.discord;
  return {
    hostId: config.sharding.hostId,
    discordOrigins: [apiUrl ?? 'https://discord.com/api', ...(restProxyUrl ? [restProxyUrl] : [])],
    logger,
  };
}

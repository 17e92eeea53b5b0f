/**
 * `BENCH_TRACING=<ratio>`: scenario 2 with the bot's traces on (issue 26's cost: with tracing at
 * 10 % sampling the /up first-response p99 stays within 50 ms), sampled at that ratio
 * (`parentbased_traceidratio`) and sent as in production, batched over OTLP/HTTP, to a receiver on
 * 127.0.0.1 that counts and drops what it gets (a collector's work is not the bot's). Unset: the
 * bot as deployed without tracing, which must cost nothing measurable.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/log/logger.js';
import { startTracing } from '../../src/ops/tracing.js';
import type { TracingSdk } from '../../src/ops/tracing-sdk.js';

export interface BenchTracing {
  /** The bot's variables: tracing on, at the ratio, to the receiver. */
  env: Record<string, string>;
  ratio: number;
  /** Starts the SDK (once the stand-in's address, Discord's origin here, is known). */
  start(discordRestUrl: string): Promise<void>;
  /** Flushes, stops, and says what the receiver got. */
  stop(): Promise<{ requests: number; bytes: number }>;
}

export async function benchTracing(): Promise<BenchTracing | undefined> {
  const raw = process.env.BENCH_TRACING?.trim();
  if (!raw) return undefined;
  const ratio = Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new Error('BENCH_TRACING: a ratio from 0 to 1');
  let requests = 0;
  let bytes = 0;
  const receiver = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(ratio),
  };
  let sdk: TracingSdk | undefined;
  return {
    env,
    ratio,
    async start(discordRestUrl) {
      sdk = await startTracing(loadConfig(env).tracing, {
        hostId: 'bench',
        discordOrigins: [discordRestUrl],
        logger: createLogger({ level: 'silent' }),
      });
    },
    async stop() {
      await sdk?.shutdown();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      return { requests, bytes };
    },
  };
}

/**
 * A local OTLP/HTTP receiver for traces (JSON, as @opentelemetry/exporter-trace-otlp-http sends
 * them), on 127.0.0.1: it keeps every span it is sent, flattened with its resource's attributes,
 * and every raw body (to search for what must never be in a span).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
  startMs: number;
  endMs: number;
  resource: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** An OTLP AnyValue as a plain value. */
function plainValue(v: unknown): unknown {
  const value = (v ?? {}) as Json;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return list((value.arrayValue as Json).values).map(plainValue);
  return undefined;
}

function attributesOf(v: unknown): Record<string, unknown> {
  return Object.fromEntries(list(v).map((a) => [String(a.key), plainValue(a.value)]));
}

const nanosToMs = (v: unknown): number => Number(BigInt(String(v ?? '0')) / 1_000_000n);

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: string[] = [];
  readonly #server: Server;
  url = '';

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        this.bodies.push(text);
        try {
          this.#take(JSON.parse(text) as Json);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #take(body: Json): void {
    for (const rs of list(body.resourceSpans)) {
      const resource = attributesOf((rs.resource as Json | undefined)?.attributes);
      for (const ss of list(rs.scopeSpans)) {
        for (const s of list(ss.spans)) {
          this.spans.push({
            traceId: String(s.traceId),
            spanId: String(s.spanId),
            parentSpanId: s.parentSpanId ? String(s.parentSpanId) : undefined,
            name: String(s.name),
            kind: Number(s.kind ?? 0),
            attributes: attributesOf(s.attributes),
            links: list(s.links).map((l) => ({ traceId: String(l.traceId), spanId: String(l.spanId) })),
            status: (s.status ?? {}) as ReceivedSpan['status'],
            startMs: nanosToMs(s.startTimeUnixNano),
            endMs: nanosToMs(s.endTimeUnixNano),
            resource,
          });
        }
      }
    }
  }
}

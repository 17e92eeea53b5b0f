// Request bodies the way Fastify treats them: content-type parsers for JSON and plain text, then an
// Ajv-like schema check with type coercion (Fastify's default: numeric strings become numbers,
// numbers become strings). Errors use Fastify's shape {statusCode, error, message}.

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function fastifyError(status: number, error: string, message: string): Reply {
  return { status, body: { statusCode: status, error, message } };
}

export function validatorError(message: string): Reply {
  return fastifyError(400, 'Bad Request', message);
}

export type ParsedBody = { ok: true; value: unknown } | { ok: false; reply: Reply };

/** Parses a POST body by its content-type. An empty body without content-type is `undefined`. */
export function parseBody(contentType: string | undefined, raw: string): ParsedBody {
  const media = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (raw.length === 0) {
    if (media === 'application/json') {
      return {
        ok: false,
        reply: validatorError("Body cannot be empty when content-type is set to 'application/json'"),
      };
    }
    return { ok: true, value: undefined };
  }
  if (media === 'application/json' || /^application\/[\w.+-]+\+json$/.test(media)) {
    try {
      return { ok: true, value: JSON.parse(raw) };
    } catch {
      return {
        ok: false,
        reply: validatorError("Body is not valid JSON but content-type is set to 'application/json'"),
      };
    }
  }
  if (media === 'text/plain') return { ok: true, value: raw };
  return {
    ok: false,
    reply: fastifyError(
      415,
      'Unsupported Media Type',
      `Unsupported Media Type: ${media === '' ? 'undefined' : media}`,
    ),
  };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export type FieldSpec = { type: 'string' } | { type: 'integer'; minimum?: number; enum?: readonly number[] };

export interface ObjectSchema {
  required: readonly string[];
  properties: Readonly<Record<string, FieldSpec>>;
}

export type Validated = { ok: true; value: Map<string, string | number> } | { ok: false; message: string };

function coerceString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '';
  return undefined;
}

function coerceNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v === null) return 0;
  return undefined;
}

/** Ajv-style check: type object, then the first missing required key, then properties in order. */
export function validateObject(body: unknown, schema: ObjectSchema): Validated {
  if (!isPlainObject(body)) return { ok: false, message: 'body must be object' };
  for (const key of schema.required) {
    if (!Object.hasOwn(body, key)) return { ok: false, message: `body must have required property '${key}'` };
  }
  const value = new Map<string, string | number>();
  for (const [key, spec] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(body, key)) continue;
    const raw = body[key];
    if (spec.type === 'string') {
      const s = coerceString(raw);
      if (s === undefined) return { ok: false, message: `body/${key} must be string` };
      value.set(key, s);
      continue;
    }
    const n = coerceNumber(raw);
    if (n === undefined || !Number.isInteger(n)) return { ok: false, message: `body/${key} must be integer` };
    if (spec.minimum !== undefined && n < spec.minimum) {
      return { ok: false, message: `body/${key} must be >= ${spec.minimum}` };
    }
    if (spec.enum !== undefined && !spec.enum.includes(n)) {
      return { ok: false, message: `body/${key} must be equal to one of the allowed values` };
    }
    value.set(key, n);
  }
  return { ok: true, value };
}

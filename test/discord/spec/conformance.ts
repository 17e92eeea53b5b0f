// Checks a request the stand-in receives against Discord's OpenAPI description (the trimmed copy in
// test/fixtures/discord-api-spec, made by trim.ts): its route must be one the description has, and
// its body must carry only the fields the operation's request schema declares. Discord drops an
// undeclared field without a word (a misspelt `allowed_mentions.repliedUser` is simply not
// applied), so the stand-in records these violations instead of refusing the request.
//
// The description's schemas leave objects open; at load every object schema with `properties` is
// closed (`unevaluatedProperties: false`, which sees through allOf/anyOf/oneOf). As Discord does,
// an integer may be written as a digit string ("32" for permissions). A union whose branches each
// fix a `type` (message components, command options, interaction callbacks) is checked against
// the branch its `type` names, so an error points into that branch alone. The validators are
// compiled once per process (warmUp, when a stand-in starts).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

/** A request that the description does not allow: its route, or a field of its body. */
export interface SpecViolation {
  method: string;
  /** The path template of the route (the request's path when no route matches). */
  route: string;
  /** JSON pointer to the offending value in the body ('' for the body itself or the route). */
  pointer: string;
  message: string;
}

type Schema = { [key: string]: unknown };

const FIXTURE = join('test', 'fixtures', 'discord-api-spec', 'openapi.json');
const SPEC_ID = 'discord-api-spec';
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const DIGITS = '^-?[0-9]+$';

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The trimmed description, found from this module up to the directory with package.json (source or dist). */
function specPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, FIXTURE))) return join(dir, FIXTURE);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`Discord stand-in: ${FIXTURE} not found above ${import.meta.url}`);
    dir = parent;
  }
}

interface Operation {
  method: string;
  route: string;
  matcher: RegExp;
  /** Literal segments first: /users/@me before /users/{user_id}. */
  params: number;
  /** Key of the request body's schema in the prepared description's $defs; undefined: no body. */
  body: string | undefined;
  /** The top-level branches of the body's schema when it is a union without a tag ($defs keys). */
  branches: string[];
}

interface Prepared {
  ajv: Ajv2020;
  operations: Operation[];
  validators: Map<string, ValidateFunction>;
}

let prepared: Prepared | undefined;

/** Loads and prepares the description and the Ajv instance (once per process). */
function prepare(): Prepared {
  if (prepared) return prepared;
  const spec = JSON.parse(readFileSync(specPath(), 'utf8')) as Schema;
  const paths = spec.paths as Record<string, Schema>;
  const components = spec.components as { schemas: Record<string, Schema> };
  const resolve = (schema: Schema): Schema => {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    const name = ref.replace('#/components/schemas/', '');
    return components.schemas[name] ?? schema;
  };
  const seen = new Set<Schema>();
  for (const schema of Object.values(components.schemas)) adapt(schema, resolve, seen);
  const defs: Record<string, Schema> = {};
  const operations: Operation[] = [];
  for (const [route, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!isSchema(operation)) continue;
      const content = (operation.requestBody as Schema | undefined)?.content as
        | Record<string, Schema>
        | undefined;
      const schema = content?.['application/json']?.schema;
      let body: string | undefined;
      const branches: string[] = [];
      if (isSchema(schema)) {
        body = `body${operations.length}`;
        adapt(schema, resolve, seen);
        defs[body] = schema;
        const union = schema.anyOf;
        if (Array.isArray(union)) {
          union.forEach((branch, i) => {
            defs[`${body}_${i}`] = branch as Schema;
            branches.push(`${body}_${i}`);
          });
        }
      }
      const segments = route.split('/');
      operations.push({
        method: method.toUpperCase(),
        route,
        matcher: new RegExp(
          `^${segments.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`,
        ),
        params: segments.filter((s) => s.startsWith('{')).length,
        body,
        branches,
      });
    }
  }
  operations.sort((a, b) => a.params - b.params);
  spec.$id = SPEC_ID;
  spec.$defs = defs;
  // strict off: the description has OpenAPI keywords (x-discord-union, format: snowflake, ...).
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(spec);
  prepared = { ajv, operations, validators: new Map() };
  return prepared;
}

/**
 * Makes a schema (and every schema in it, in place) closed, lenient on integers written as digit
 * strings, and a union tagged by `type` checked against the branch its tag names.
 */
function adapt(schema: Schema, resolve: (schema: Schema) => Schema, seen: Set<Schema>): void {
  if (seen.has(schema)) return;
  seen.add(schema);
  const type = schema.type;
  const types = Array.isArray(type) ? (type as string[]) : typeof type === 'string' ? [type] : [];
  if (types.includes('integer') && !types.includes('string')) {
    schema.type = [...types, 'string'];
    schema.pattern ??= DIGITS;
  }
  if (isSchema(schema.properties)) {
    for (const child of Object.values(schema.properties)) if (isSchema(child)) adapt(child, resolve, seen);
    if (schema.additionalProperties === undefined && schema.unevaluatedProperties === undefined) {
      schema.unevaluatedProperties = false;
    }
  }
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains']) {
    const child = schema[key];
    if (isSchema(child)) adapt(child, resolve, seen);
  }
  // oneOf as anyOf: with digit strings allowed, an integer-or-string union would match twice.
  if (Array.isArray(schema.oneOf)) {
    schema.anyOf = schema.oneOf;
    delete schema.oneOf;
  }
  for (const key of ['allOf', 'anyOf', 'prefixItems']) {
    const list = schema[key];
    if (Array.isArray(list)) for (const child of list) if (isSchema(child)) adapt(child, resolve, seen);
  }
  if (Array.isArray(schema.anyOf)) tagUnion(schema, resolve, seen);
}

/**
 * A union whose branches each fix `type` (const or enum, no two alike) becomes a chain of
 * if/then: the branch the body's `type` names, alone; any other `type` falls to the union itself.
 */
function tagUnion(schema: Schema, resolve: (schema: Schema) => Schema, seen: Set<Schema>): void {
  const branches = schema.anyOf as Schema[];
  if (branches.length < 2) return;
  const tags: unknown[][] = [];
  const all = new Set<string>();
  for (const branch of branches) {
    const tag = (resolve(branch).properties as Record<string, Schema> | undefined)?.type;
    const values = tag === undefined ? undefined : tag.const !== undefined ? [tag.const] : tag.enum;
    if (!Array.isArray(values) || values.length === 0) return;
    for (const value of values) {
      const key = JSON.stringify(value);
      if (all.has(key)) return;
      all.add(key);
    }
    tags.push(values);
  }
  let chain: Schema = { anyOf: branches };
  seen.add(chain);
  for (let i = branches.length - 1; i >= 0; i -= 1) {
    const tag: Schema = { enum: tags[i] };
    const condition: Schema = { type: 'object', properties: { type: tag }, required: ['type'] };
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
    chain = { if: condition, then: branches[i], else: chain };
    for (const made of [tag, condition, chain]) seen.add(made);
  }
  delete schema.anyOf;
  if (schema.allOf === undefined) schema.allOf = [chain];
  else (schema.allOf as Schema[]).push(chain);
}

function validatorFor(p: Prepared, key: string): ValidateFunction {
  let validate = p.validators.get(key);
  if (!validate) {
    validate = p.ajv.getSchema(`${SPEC_ID}#/$defs/${key}`);
    if (!validate) throw new Error(`Discord stand-in: no schema for ${key}`);
    p.validators.set(key, validate);
  }
  return validate;
}

/** Ajv's errors as violations: an undeclared field at its own pointer, union noise left out. */
function violationsOf(method: string, route: string, errors: ErrorObject[]): SpecViolation[] {
  const meaningful = errors.filter(
    (e) =>
      e.keyword !== 'anyOf' &&
      e.keyword !== 'oneOf' &&
      e.keyword !== 'if' &&
      !(e.keyword === 'type' && (e.params as { type?: unknown }).type === 'null'),
  );
  const chosen = meaningful.length > 0 ? meaningful : errors;
  const out = new Map<string, SpecViolation>();
  for (const e of chosen) {
    const undeclared = e.keyword === 'unevaluatedProperties';
    const field = undeclared ? (e.params as { unevaluatedProperty: string }).unevaluatedProperty : undefined;
    const pointer =
      field === undefined
        ? e.instancePath
        : `${e.instancePath}/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const message = undeclared ? 'is not declared by the API' : `${e.message ?? e.keyword} (${e.schemaPath})`;
    out.set(`${pointer} ${message}`, { method, route, pointer, message });
  }
  return [...out.values()];
}

/**
 * Fields discord.js itself writes into every message body (MessagePayload.resolveBody: `tts` and
 * `enforce_nonce`, as `false` when not asked for), even where the route does not declare them;
 * Discord ignores them there. Tolerated as discord.js sends them: `false`, nothing else.
 */
const LIBRARY_DEFAULTS: ReadonlyMap<string, readonly string[]> = new Map([
  ['POST /interactions/{interaction_id}/{interaction_token}/callback', ['/data/enforce_nonce']],
  ['POST /webhooks/{webhook_id}/{webhook_token}', ['/enforce_nonce']],
  ['PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original', ['/tts', '/enforce_nonce']],
  ['PATCH /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}', ['/tts', '/enforce_nonce']],
]);

function isLibraryDefault(violation: SpecViolation, body: unknown): boolean {
  const pointers = LIBRARY_DEFAULTS.get(`${violation.method} ${violation.route}`);
  if (!pointers?.includes(violation.pointer)) return false;
  let value: unknown = body;
  for (const key of violation.pointer.split('/').slice(1)) value = isSchema(value) ? value[key] : undefined;
  return value === false;
}

/** Violations one per line, each with how many times it came: for a test's failure message. */
export function describeViolations(violations: readonly SpecViolation[]): string {
  const counts = new Map<string, number>();
  for (const v of violations) {
    const line = `${v.method} ${v.route} ${v.pointer === '' ? '(body)' : v.pointer}: ${v.message}`;
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return [...counts].map(([line, n]) => (n > 1 ? `${line} (x${n})` : line)).join('\n');
}

/** Throws, with the violations one line each, when there is any: for a test's teardown. */
export function assertNoViolations(violations: readonly SpecViolation[]): void {
  if (violations.length > 0) {
    throw new Error(`requests Discord's API does not allow:\n${describeViolations(violations)}`);
  }
}

/** The route template of a request (path without /api/v10), or undefined when the description has none. */
export function specRoute(method: string, path: string): string | undefined {
  return findOperation(prepare(), method.toUpperCase(), path)?.route;
}

function findOperation(p: Prepared, method: string, path: string): Operation | undefined {
  return p.operations.find((op) => op.method === method && op.matcher.test(path));
}

/**
 * What is wrong with a request by Discord's description: [] when nothing. `path` without the
 * /api/v10 prefix; `body` as parsed (JSON, or a multipart body's payload_json), undefined when none.
 */
export function checkRequest(method: string, path: string, body: unknown): SpecViolation[] {
  const p = prepare();
  const upper = method.toUpperCase();
  const operation = findOperation(p, upper, path);
  if (!operation) {
    return [{ method: upper, route: path, pointer: '', message: 'no such route in the API description' }];
  }
  if (body === undefined) return [];
  if (operation.body === undefined) {
    return [
      { method: upper, route: operation.route, pointer: '', message: 'the route takes no request body' },
    ];
  }
  const validate = validatorFor(p, operation.body);
  if (validate(body)) return [];
  let errors = validate.errors ?? [];
  // A union without a tag: the errors of the branch that came closest, not of all of them.
  if (operation.branches.length > 0) {
    let best: ErrorObject[] | undefined;
    for (const key of operation.branches) {
      const branch = validatorFor(p, key);
      if (branch(body)) return [];
      const errs = branch.errors ?? [];
      if (best === undefined || errs.length < best.length) best = errs;
    }
    if (best) errors = best;
  }
  return violationsOf(upper, operation.route, errors).filter((v) => !isLibraryDefault(v, body));
}

/**
 * Loads the description and compiles every request body's validator now (once per process, about
 * a second), so that the first requests a test times are not the ones that pay for it.
 */
export function warmUp(): void {
  const p = prepare();
  for (const operation of p.operations) if (operation.body !== undefined) validatorFor(p, operation.body);
}

/** Every operation of the description (method and route template). */
export function specOperations(): { method: string; route: string }[] {
  return prepare().operations.map(({ method, route }) => ({ method, route }));
}

// Trims Discord's OpenAPI 3.1 description (github.com/discord/discord-api-spec, specs/openapi.json)
// to the operations of SPEC_ROUTES (routes.ts) and the components they reference, transitively:
// the copy the stand-in checks requests against (test/fixtures/discord-api-spec/openapi.json).
// The operations and components are kept as they are; conformance.ts closes the schemas at load.
//
// Regenerate (see test/fixtures/discord-api-spec/SOURCE.md):
//   npx tsc -p tsconfig.build.json
//   git -C <clone of discord/discord-api-spec> show <commit>:specs/openapi.json \
//     | node dist/test/discord/spec/trim.js > test/fixtures/discord-api-spec/openapi.json
// or with files: node dist/test/discord/spec/trim.js <full openapi.json> <trimmed openapi.json>

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SPEC_ROUTES, type SpecRoute } from './routes.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const COMPONENT_REF = /^#\/components\/([^/]+)\/([^/]+)$/;

/** Every `#/components/<kind>/<name>` reference in a value. */
function refsIn(value: Json, out: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) refsIn(item, out);
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out.add(item);
      else refsIn(item, out);
    }
  }
}

/** The description with only `routes`' operations (and their path-level keys) and the components they need. */
export function trimSpec(full: JsonObject, routes: readonly SpecRoute[] = SPEC_ROUTES): JsonObject {
  const fullPaths = full.paths;
  const fullComponents = full.components;
  if (!isObject(fullPaths) || !isObject(fullComponents)) throw new Error('not an OpenAPI description');
  const paths: JsonObject = {};
  for (const { method, path } of routes) {
    const item = fullPaths[path];
    const operation = isObject(item) ? item[method.toLowerCase()] : undefined;
    if (!isObject(item) || !isObject(operation))
      throw new Error(`${method} ${path} is not in the description`);
    let kept = paths[path];
    if (!isObject(kept)) {
      kept = {};
      for (const [key, value] of Object.entries(item)) {
        if (!HTTP_METHODS.has(key)) kept[key] = value;
      }
      paths[path] = kept;
    }
    kept[method.toLowerCase()] = operation;
  }
  const components: { [kind: string]: JsonObject } = {};
  const pending = new Set<string>();
  refsIn(paths, pending);
  if (full.security !== undefined) refsIn(full.security, pending);
  const done = new Set<string>();
  while (pending.size > 0) {
    const [ref] = pending as unknown as [string];
    pending.delete(ref);
    if (done.has(ref)) continue;
    done.add(ref);
    const match = COMPONENT_REF.exec(ref);
    const kind = match?.[1];
    const name = match?.[2];
    const source = kind === undefined ? undefined : fullComponents[kind];
    const target = isObject(source) && name !== undefined ? source[name] : undefined;
    if (kind === undefined || name === undefined || target === undefined) {
      throw new Error(`unresolved reference ${ref}`);
    }
    components[kind] ??= {};
    components[kind][name] = target;
    refsIn(target, pending);
  }
  // Every security scheme stays: the operations name them in `security` without a $ref.
  if (isObject(fullComponents.securitySchemes)) components.securitySchemes = fullComponents.securitySchemes;
  const sorted: JsonObject = {};
  for (const kind of Object.keys(components).sort()) {
    const entries = components[kind] as JsonObject;
    sorted[kind] = Object.fromEntries(
      Object.keys(entries)
        .sort()
        .map((name) => [name, entries[name] as Json]),
    );
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(full)) {
    if (key === 'paths') out.paths = paths;
    else if (key === 'components') out.components = sorted;
    else out[key] = value;
  }
  return out;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [input, output] = process.argv.slice(2);
  const text = readFileSync(input ?? 0, 'utf8');
  const trimmed = `${JSON.stringify(trimSpec(JSON.parse(text) as JsonObject), null, 2)}\n`;
  if (output === undefined) process.stdout.write(trimmed);
  else writeFileSync(output, trimmed);
}

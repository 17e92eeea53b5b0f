/**
 * The production install is made with --ignore-scripts: better-sqlite3's native module is not
 * built there. Nothing may load it before the configuration asks for SQLite, and a SQLite store
 * without it is one clear error.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/** Built by `npm run build`, as the other tests that start processes need. */
const STORE_MODULE = pathToFileURL(join(import.meta.dirname, '../../dist/src/store/index.js')).href;

function node(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: join(import.meta.dirname, '../..') }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

/** better-sqlite3 as an --ignore-scripts install has it: it loads, and fails to open a database. */
const UNBUILT_ENGINE = `
  export default class Database {
    constructor() {
      throw new Error('Could not locate the bindings file. Tried:\\n → /app/node_modules/better-sqlite3/build/better_sqlite3.node\\n → /app/node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    }
  }`;

const HOOKS = `
  export async function resolve(specifier, context, next) {
    if (specifier === 'better-sqlite3') {
      return { url: 'data:text/javascript,' + encodeURIComponent(${JSON.stringify(UNBUILT_ENGINE)}), shortCircuit: true };
    }
    return next(specifier, context);
  }`;

const REGISTER = `
  import { register } from 'node:module';
  register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}));`;

describe('loading the engines', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('loads neither engine when the store module is imported', async () => {
    const out = await node([
      '--input-type=module',
      '-e',
      `
      import { createRequire } from 'node:module';
      await import(${JSON.stringify(STORE_MODULE)});
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify(['better-sqlite3', 'pg'].filter((name) =>
        loaded.some((path) => path.includes('/node_modules/' + name + '/')))));`,
    ]);
    expect(JSON.parse(out)).toEqual([]);
  });

  it('is one clear error when the native module of better-sqlite3 is not built', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    dirs.push(dir);
    const out = await node([
      '--import',
      `data:text/javascript,${encodeURIComponent(REGISTER)}`,
      '--input-type=module',
      '-e',
      `
      const { openStore } = await import(${JSON.stringify(STORE_MODULE)});
      await openStore({ dataDir: ${JSON.stringify(dir)} }).then(
        () => console.log('opened'),
        (err) => console.log(JSON.stringify({ name: err.name, message: err.message })),
      );`,
    ]);
    expect(JSON.parse(out)).toEqual({
      name: 'StoreError',
      message:
        'SQLite is not available: the native module of better-sqlite3 is not built; run "npm rebuild better-sqlite3", or set DATABASE_URL to use PostgreSQL',
    });
  });
});

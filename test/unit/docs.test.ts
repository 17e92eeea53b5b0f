/**
 * The documentation stays true to the configuration schema: docs/configuration.md and
 * .env.example list every variable the schema reads, and the README's first-run table names only
 * variables the schema reads.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA } from '../../src/config/env.js';

/** Set by discord.js's ShardingManager in the processes it spawns; operators never set them. */
const INTERNAL = new Set(['SHARDING_MANAGER', 'SHARDS']);
const read = (name: string) => readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8');

/** The first cell of each row of the table that follows `heading` (up to the next heading). */
function tableNames(markdown: string, heading: string): string[] {
  const text = `\n${markdown}`;
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading ${heading}`);
  const section = text.slice(start + heading.length + 2).split(/\n#{1,6} /)[0] ?? '';
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] ?? '');
}

describe('documentation', () => {
  const variables = Object.keys(SCHEMA.shape).filter((name) => !INTERNAL.has(name));

  it('docs/configuration.md has a table row for every variable, and none for a variable the schema does not read', () => {
    const names = tableNames(read('docs/configuration.md'), '# Configuration');
    expect(names.filter((name) => !variables.includes(name))).toEqual([]);
    expect(variables.filter((name) => !names.includes(name))).toEqual([]);
  });

  it("the README's first-run table names only variables the schema reads, DISCORD_TOKEN first", () => {
    const names = tableNames(read('README.md'), '## Configuration for a first run');
    expect(names[0]).toBe('DISCORD_TOKEN');
    expect(names.filter((name) => !variables.includes(name))).toEqual([]);
  });

  it('.env.example lists every variable', () => {
    const example = read('.env.example');
    const missing = variables.filter((name) => !new RegExp(`^${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it('the README names every npm script a user runs', () => {
    const readme = read('README.md');
    for (const script of [
      'npm ci',
      'npm start',
      'npm test',
      'npm run sandbox',
      'npm run deploy-commands',
      'npm run start:sharded',
      'npm run bench',
    ]) {
      expect(readme).toContain(script);
    }
  });
});

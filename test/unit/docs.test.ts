/** The README and .env.example stay true: every variable the schema reads is documented in both. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA } from '../../src/config/env.js';

/** Set by discord.js's ShardingManager in the processes it spawns; operators never set them. */
const INTERNAL = new Set(['SHARDING_MANAGER', 'SHARDS']);
const read = (name: string) => readFileSync(new URL(`../../${name}`, import.meta.url), 'utf8');

describe('documentation', () => {
  const variables = Object.keys(SCHEMA.shape).filter((name) => !INTERNAL.has(name));

  it('the README configuration table lists every variable', () => {
    const readme = read('README.md');
    const missing = variables.filter((name) => !readme.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
  });

  it('.env.example lists every variable', () => {
    const example = read('.env.example');
    const missing = variables.filter((name) => !new RegExp(`^${name}=`, 'm').test(example));
    expect(missing).toEqual([]);
  });

  it('the README names every npm script a user runs', () => {
    const readme = read('README.md');
    for (const script of ['npm ci', 'npm start', 'npm test', 'npm run sandbox', 'npm run deploy-commands']) {
      expect(readme).toContain(script);
    }
    expect(readme).toContain('npm run start:sharded');
  });
});

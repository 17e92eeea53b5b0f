/**
 * Kysely's values (its types come from 'kysely' as usual), loaded through its CommonJS build.
 * Its ES module build is 279 files, and Node keeps much more for each ES module than for each
 * CommonJS one: measured in the bot's process, loading it added about 9.5 MB of RSS against
 * 2.5 MB for the CommonJS build, with a budget of 15 MB for the whole store. Every module of
 * the store takes Kysely from here, so that only one copy is ever loaded.
 */
import { createRequire } from 'node:module';

const kysely = createRequire(import.meta.url)('kysely') as typeof import('kysely');

export const { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect, sql } = kysely;

/**
 * `npm run docs:commands`: writes docs/commands.md, the table of every command, subcommand and
 * option in both languages, from the definitions (commands/catalog.ts). A unit test
 * (test/unit/command-table.test.ts) fails while the file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { renderCommandTable } from '../../commands/catalog.js';

/** docs/commands.md of the repository, seen from the built file (dist/src/app/command-table.js). */
const TARGET = new URL('../../../docs/commands.md', import.meta.url);

writeFileSync(TARGET, renderCommandTable());
process.stdout.write(`wrote ${TARGET.pathname}\n`);

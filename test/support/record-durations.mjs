// Writes test/durations.json from a Vitest JSON report (`npx vitest run --reporter=json
// --outputFile.json=REPORT.json`): the seconds of every file that took 2 s or more, so that the
// sequencer (test/support/sequencer.ts) starts the longest files first on a clean clone.
import { readFileSync, writeFileSync } from 'node:fs';

const [report] = process.argv.slice(2);
if (!report) {
  console.error('usage: node test/support/record-durations.mjs REPORT.json');
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const files = {};
for (const t of [...testResults].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))) {
  const seconds = (t.endTime - t.startTime) / 1000;
  // As the sequencer names it, from the repository's root, whichever checkout ran the report.
  const name = t.name.slice(t.name.indexOf('/test/') + 1);
  if (seconds >= 2) files[name] = Math.round(seconds);
}
const note =
  'Seconds each slow test file took in a full run (its Vitest JSON report), so the longest start first ' +
  'on a fresh clone: refresh with node test/support/record-durations.mjs REPORT.json';
writeFileSync('test/durations.json', `${JSON.stringify({ '//': note, files }, null, 2)}\n`);
console.log(`${Object.keys(files).length} files recorded in test/durations.json`);

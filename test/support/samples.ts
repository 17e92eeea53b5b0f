/** The directory's published response bodies (test/fixtures/directory-samples), as the tests read them. */
import { readFileSync } from 'node:fs';

const SAMPLES = new URL('../fixtures/directory-samples/', import.meta.url);

/** A sample's text, e.g. directorySampleText('validator-400.json'). */
export function directorySampleText(name: string): string {
  return readFileSync(new URL(name, SAMPLES), 'utf8');
}

/** A sample parsed as JSON, e.g. directorySample('bot.json'). */
export function directorySample(name: string): unknown {
  return JSON.parse(directorySampleText(name));
}

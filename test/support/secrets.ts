/**
 * The one scan for leaked secrets: every token a test hands out is looked for in what it captured
 * (log lines, a child's output, requests the bot sent Discord).
 */
import type { RecordedRestRequest } from '../discord/index.js';

/** A captured text and where it came from, for the report. */
export interface ScannedText {
  where: string;
  text: string;
}

/**
 * Where any secret occurs in the texts: `where: excerpt` per hit. Secrets under 8 characters are
 * passed over: every token handed out is longer, and a short string would match by chance.
 */
export function leaksIn(texts: Iterable<ScannedText>, secrets: Iterable<string>): string[] {
  const list = [...secrets].filter((s) => s.length >= 8);
  const out: string[] = [];
  for (const { where, text } of texts) {
    for (const s of list) if (text.includes(s)) out.push(`${where}: ${text.slice(0, 120)}`);
  }
  return out;
}

/** Lines as texts to scan, each named `<name> <index>`. */
export function linesOf(name: string, lines: readonly string[]): ScannedText[] {
  return lines.map((text, i) => ({ where: `${name} ${i}`, text }));
}

/** The requests sent to the Discord stand-in as texts to scan: path, query and body. */
export function discordRequestTexts(requests: readonly RecordedRestRequest[]): ScannedText[] {
  return requests.map((r) => ({
    where: `${r.method} ${r.path}`,
    text: `${r.path} ${r.query} ${r.body === undefined ? '' : JSON.stringify(r.body)}`,
  }));
}

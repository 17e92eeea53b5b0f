/**
 * The README stays a front door, and the documentation's relative links lead somewhere: every
 * relative link in every Markdown file of the repository (README.md, docs/, bench/, deploy/, the
 * fixtures' sources) names a file of the repository and, with `#anchor` into a markdown file, one
 * of its headings (GitHub's heading ids).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What is not the repository's own: installed, built, or git's. */
const NOT_OURS = new Set(['node_modules', 'dist', '.git', 'data', 'coverage']);

/** Every Markdown file under `dir`, as paths from the root. */
function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return NOT_OURS.has(entry.name) ? [] : markdownUnder(path);
    return entry.isFile() && entry.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = markdownUnder('').sort();
/** The documentation's own pages, each linked from the README. */
const DOCS = PAGES.filter((page) => /^docs\/[^/]+\.md$/.test(page));

/** Markdown without its fenced code blocks and inline code spans (links there are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  const body = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  for (const match of body.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = (match[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

function links(page: string): { target: string; anchor: string | undefined }[] {
  const text = prose(readFileSync(join(ROOT, page), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href))
    .map((href) => {
      const [path = '', anchor] = href.split('#', 2);
      return { target: path === '' ? page : join(dirname(page), path), anchor };
    });
}

describe('documentation links', () => {
  it('finds the pages and their links', () => {
    expect(PAGES).toContain('docs/configuration.md');
    expect(PAGES).toContain('bench/README.md');
    expect(PAGES).toContain('deploy/README.md');
    expect(PAGES).toContain('docs/ru/notifications.md');
    expect(PAGES.filter((page) => page.startsWith('node_modules/') || page.startsWith('dist/'))).toEqual([]);
    expect(links('README.md').length).toBeGreaterThan(10);
    expect(headingIds('# A `/settings` page: the directory’s webhooks\n## Usage\n## Usage')).toEqual(
      new Set(['a-settings-page-the-directorys-webhooks', 'usage', 'usage-1']),
    );
  });

  it.each(PAGES)('every relative link in %s names an existing file and heading', (page) => {
    const broken: string[] = [];
    for (const { target, anchor } of links(page)) {
      const file = join(ROOT, target);
      const name = relative(ROOT, file);
      if (name.startsWith('..') || !existsSync(file)) {
        broken.push(`${name}: no such file`);
      } else if (anchor !== undefined) {
        const ok =
          statSync(file).isFile() &&
          file.endsWith('.md') &&
          headingIds(readFileSync(file, 'utf8')).has(anchor);
        if (!ok) broken.push(`${name}#${anchor}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('keeps the README a front door (under 320 lines) that links every docs page', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(320);
    const linked = new Set(links('README.md').map((l) => l.target));
    expect(DOCS.filter((p) => !linked.has(p))).toEqual([]);
  });
});

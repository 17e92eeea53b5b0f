/**
 * The order test files start in: the longest first, as test/durations.json recorded them, so no
 * long file starts last and leaves a worker idle at the end (on a fresh clone Vitest has no timings
 * of its own and starts the largest files first: the fault suite, one of the longest, is small and
 * started last, 35 s after the other worker had finished). Files not listed take less than 2 s and
 * keep Vitest's own order after the listed ones. Once Vitest has timings of its own (a second run
 * on the same checkout), they decide instead, failed files first.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const recorded = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as {
  files: Record<string, number>;
};

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const own = await super.sort(files);
    const known = own.some((spec) => this.ctx.cache.getFileTestResults(this.key(spec)) !== undefined);
    if (known) return own;
    const seconds = (spec: TestSpecification) =>
      recorded.files[relative(this.ctx.config.root, spec.moduleId).split('\\').join('/')] ?? 0;
    // Array.prototype.sort is stable: files with no record keep Vitest's order.
    return [...own].sort((a, b) => seconds(b) - seconds(a));
  }

  private key(spec: TestSpecification): string {
    return `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
  }
}

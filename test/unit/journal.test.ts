import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileUpJournal, type JournalFiles, type PendingUp } from '../../src/features/up/journal.js';

/**
 * The real file operations, with the writes counted, `duringWrite` called as each write starts and
 * the next `failWrites` writes refused.
 */
function countingFiles(): JournalFiles & {
  writes: number;
  failWrites: number;
  duringWrite: (() => void) | undefined;
} {
  const files = {
    writes: 0,
    failWrites: 0,
    duringWrite: undefined as (() => void) | undefined,
    readFile: (path: string, encoding: 'utf8') => fsPromises.readFile(path, encoding),
    mkdir: (path: string, options: { recursive: true }) => fsPromises.mkdir(path, options),
    rename: (from: string, to: string) => fsPromises.rename(from, to),
    async writeFile(path: string, data: string, options: { mode: number }) {
      files.writes++;
      files.duringWrite?.();
      if (files.failWrites > 0) {
        files.failWrites--;
        throw new Error('disk full');
      }
      await fsPromises.writeFile(path, data, options);
    },
  };
  return files;
}

const ids = (path: string): string[] =>
  (JSON.parse(readFileSync(path, 'utf8')) as PendingUp[]).map((e) => e.interactionId).sort();

const entry = (id: string): PendingUp => ({
  interactionId: id,
  token: `interaction-token-${id}`,
  applicationId: '1000000000000000001',
  guildId: '722424773233213460',
  channelId: '722424773233213461',
  channelName: 'general',
  userId: '525366699969478676',
  locale: 'ru',
  createdAt: 1_700_000_000_000,
});

describe('FileUpJournal', () => {
  it('keeps entries across instances (a restart) and forgets removed ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const first = new FileUpJournal(dir);
    await Promise.all([first.add(entry('1')), first.add(entry('2')), first.add(entry('3'))]);
    await first.remove('2');
    const second = new FileUpJournal(dir);
    expect((await second.list()).map((e) => e.interactionId).sort()).toEqual(['1', '3']);
  });

  it('keeps one file per name, so shard processes sharing DATA_DIR never overwrite each other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    await new FileUpJournal(dir, 'pending-ups-shards-0').add(entry('1'));
    await new FileUpJournal(dir, 'pending-ups-shards-1').add(entry('2'));
    expect((await new FileUpJournal(dir, 'pending-ups-shards-0').list()).map((e) => e.interactionId)).toEqual(
      ['1'],
    );
    expect((await new FileUpJournal(dir, 'pending-ups-shards-1').list()).map((e) => e.interactionId)).toEqual(
      ['2'],
    );
  });

  it('is readable by its owner only: it holds interaction tokens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const journal = new FileUpJournal(dir);
    await journal.add(entry('1'));
    expect(statSync(journal.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(journal.path, 'utf8')).toContain('interaction-token-1');
  });

  it('starts empty from a missing, corrupt or foreign file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    expect(await new FileUpJournal(dir).list()).toEqual([]);
    writeFileSync(join(dir, 'pending-ups.json'), '{"half":');
    expect(await new FileUpJournal(dir).list()).toEqual([]);
    writeFileSync(join(dir, 'pending-ups.json'), JSON.stringify([{ interactionId: 1 }, entry('9')]));
    expect((await new FileUpJournal(dir).list()).map((e) => e.interactionId)).toEqual(['9']);
  });

  it('reports a write it cannot make, and goes on working after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    writeFileSync(join(dir, 'blocked'), '');
    const journal = new FileUpJournal(join(dir, 'blocked'));
    await expect(journal.add(entry('1'))).rejects.toThrow();
    await expect(journal.list()).resolves.toHaveLength(1);
  });

  it('writes the changes made during a write together in the next one, each answered once it is on disk', async () => {
    const files = countingFiles();
    const journal = new FileUpJournal(mkdtempSync(join(tmpdir(), 'journal-')), 'pending-ups', files);
    const made: Array<Promise<boolean>> = [];
    const add = (id: string): void => {
      made.push(journal.add(entry(id)).then(() => ids(journal.path).includes(id)));
    };
    add('1');
    // 49 more while the first write is under way (an /up burst): they wait for one write together.
    files.duringWrite = () => {
      files.duringWrite = undefined;
      for (let i = 2; i <= 50; i++) add(String(i));
    };
    await made[0];
    expect(made).toHaveLength(50);
    expect((await Promise.all(made)).every(Boolean)).toBe(true);
    expect(files.writes).toBe(2);
    await Promise.all(Array.from({ length: 50 }, (_, i) => journal.remove(String(i + 1))));
    expect(files.writes).toBe(3);
    expect(ids(journal.path)).toEqual([]);
  });

  it('fails every change of a write that fails, and the next write still carries them', async () => {
    const files = countingFiles();
    const journal = new FileUpJournal(mkdtempSync(join(tmpdir(), 'journal-')), 'pending-ups', files);
    await journal.add(entry('1'));
    files.failWrites = 1;
    let after: Promise<void> | undefined;
    files.duringWrite = () => {
      files.duringWrite = undefined;
      after = journal.add(entry('4'));
    };
    const failed = [journal.add(entry('2')), journal.add(entry('3'))];
    await expect(failed[0]).rejects.toThrow('disk full');
    await expect(failed[1]).rejects.toThrow('disk full');
    // Made during the failing write: the next write, which succeeds.
    await after;
    expect(files.writes).toBe(3);
    // As before the batching: a change stays in memory, so a later write records it.
    expect(ids(journal.path)).toEqual(['1', '2', '3', '4']);
  });
});

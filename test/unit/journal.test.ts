import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileUpJournal, type PendingUp } from '../../src/bot/journal.js';

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
});

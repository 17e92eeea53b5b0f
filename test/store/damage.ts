/** A SQLite file damaged as a failing disk would leave it, for the tests of a broken store. */
import { closeSync, openSync, writeSync } from 'node:fs';
import Sqlite from 'better-sqlite3';

/** Overwrites the first page of `table`'s tree with noise (the file checkpointed first). */
export function damageTable(file: string, table: string): void {
  const db = new Sqlite(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const { rootpage } = db.prepare('select rootpage from sqlite_master where name = ?').get(table) as {
    rootpage: number;
  };
  db.close();
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (rootpage - 1) * pageSize);
  closeSync(fd);
}

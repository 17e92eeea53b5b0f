import Sqlite from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { keepingStatements } from '../../src/store/sqlite-driver.js';

describe('the SQLite statements kept prepared', () => {
  it('prepares each query once, and lets the least recently used go past 200', () => {
    const database = new Sqlite(':memory:');
    const prepare = vi.spyOn(database, 'prepare');
    const kept = keepingStatements(database);
    const query = (n: number) => `select ${n} as n`;

    expect(kept.prepare(query(0)).all([])).toEqual([{ n: 0 }]);
    expect(kept.prepare(query(0)).all([])).toEqual([{ n: 0 }]);
    expect(prepare).toHaveBeenCalledTimes(1);

    for (let n = 1; n <= 200; n++) kept.prepare(query(n));
    expect(prepare).toHaveBeenCalledTimes(201);
    // Past 200, the least recently used (0) went: 1 is still kept, 0 is prepared again.
    kept.prepare(query(1));
    expect(prepare).toHaveBeenCalledTimes(201);
    expect(kept.prepare(query(0)).all([])).toEqual([{ n: 0 }]);
    expect(prepare).toHaveBeenCalledTimes(202);
    kept.close();
    expect(database.open).toBe(false);
  });
});

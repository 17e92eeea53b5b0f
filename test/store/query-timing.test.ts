/**
 * The store's statements timed for the metrics (src/store/query-timing.ts), on both engines: each
 * statement told once with its engine and kind, a failed one as failed, and never its text.
 */
import { describe, expect, it } from 'vitest';
import { openStore, SettingsRepository, type StoreQueryEvent } from '../../src/store/index.js';
import { sql } from '../../src/store/kysely.js';
import { ENGINES, freshPlace } from './places.js';

describe.each(ENGINES)("the store's statements, timed (%s)", (engine) => {
  it('tells each statement once, by engine and kind, a failed one as failed', async () => {
    const place = await freshPlace(engine);
    const events: StoreQueryEvent[] = [];
    const store = await openStore({ ...place.options, onQuery: (event) => events.push(event) });
    try {
      // What opening ran (PostgreSQL's migrations go through the store's own pool) is not what is looked at.
      events.length = 0;
      const settings = new SettingsRepository(store);
      await settings.update('123456789012345678', { reminderChannelId: '223456789012345678' }, Date.now());
      expect(await settings.get('123456789012345678')).toMatchObject({
        reminderChannelId: '223456789012345678',
      });
      const kinds = events.map((e) => e.statement);
      expect(kinds).toContain('select');
      expect(kinds.some((k) => k === 'insert' || k === 'update')).toBe(true);
      for (const event of events) {
        expect(event).toEqual({
          engine,
          statement: expect.stringMatching(/^(select|insert|update|delete|other)$/),
          durationMs: expect.any(Number),
          failed: false,
        });
        expect(event.durationMs).toBeGreaterThanOrEqual(0);
      }

      events.length = 0;
      await expect(store.run((db) => sql`select * from no_such_table`.execute(db))).rejects.toThrow();
      expect(events).toEqual([{ engine, statement: 'select', durationMs: expect.any(Number), failed: true }]);
    } finally {
      await store.close();
      await place.remove();
    }
  });

  it('a listener that throws does not fail the statement', async () => {
    const place = await freshPlace(engine);
    const store = await openStore({
      ...place.options,
      onQuery: () => {
        throw new Error('the metrics broke');
      },
    });
    try {
      await expect(new SettingsRepository(store).get('123456789012345678')).resolves.toBeUndefined();
    } finally {
      await store.close();
      await place.remove();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openStore, type Store } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { ENGINES, freshPlace, type Place } from './places.js';
import { type SchemaShape, schemaShape, typeClass } from './schema-shape.js';

describe('one schema on both engines', () => {
  const places: Place[] = [];
  const stores = new Map<Engine, Store>();
  const shapes = new Map<Engine, SchemaShape>();

  beforeAll(async () => {
    for (const engine of ENGINES) {
      const place = await freshPlace(engine);
      places.push(place);
      const store = await openStore(place.options);
      stores.set(engine, store);
      shapes.set(engine, await schemaShape(store));
    }
  });
  afterAll(async () => {
    await Promise.all([...stores.values()].map((s) => s.close()));
    await Promise.all(places.map((p) => p.remove()));
  });

  it.skipIf(!HAS_POSTGRES)(
    'has the same tables, columns, types, nullability, primary keys and indexes on SQLite and PostgreSQL',
    () => {
      expect(shapes.get('sqlite')).toEqual(shapes.get('postgres'));
    },
  );

  it('is the schema the code expects', () => {
    const shape = shapes.get('sqlite')!;
    expect(Object.keys(shape)).toEqual([
      'comment_posts',
      'digests',
      'directory_grants',
      'directory_holds',
      'directory_waiters',
      'directory_webhooks',
      'gateway_guilds',
      'gateway_sessions',
      'guild_settings',
      'identify_turns',
      'leases',
      'live_boards',
      'pending_ups',
      'personal_reminders',
      'reminder_followups',
      'reminders',
      'reward_grants',
      'reward_roles',
      'shard_states',
      'streak_notices',
      'up_history',
      'up_watches',
      'webhook_events',
      'welcomes',
    ]);
    expect(shape.welcomes?.primaryKey).toEqual(['guild_id']);
    expect(shape.comment_posts?.primaryKey).toEqual(['guild_id', 'user_id']);
    expect(shape.up_watches?.primaryKey).toEqual(['interaction_id']);
    expect(shape.up_watches?.indexes).toEqual([
      { name: 'up_watches_guild_id', columns: ['guild_id'], unique: false },
    ]);
    expect(shape.webhook_events?.primaryKey).toEqual(['id']);
    expect(shape.webhook_events?.indexes).toEqual([
      { name: 'webhook_events_guild_received_at', columns: ['guild_id', 'received_at'], unique: false },
      { name: 'webhook_events_guild_state', columns: ['guild_id', 'state'], unique: false },
      { name: 'webhook_events_state_received_at', columns: ['state', 'received_at'], unique: false },
    ]);
    expect(shape.directory_webhooks?.primaryKey).toEqual(['guild_id']);
    expect(shape.up_history?.primaryKey).toEqual(['id']);
    expect(shape.up_history?.indexes).toEqual([
      { name: 'up_history_at', columns: ['at'], unique: false },
      { name: 'up_history_guild_at', columns: ['guild_id', 'at'], unique: false },
    ]);
    expect(shape.reminders?.primaryKey).toEqual(['guild_id']);
    expect(shape.reminders?.indexes).toEqual([
      { name: 'reminders_next_up_at', columns: ['next_up_at'], unique: false },
      { name: 'reminders_pending_due_at', columns: ['due_at'], unique: false },
    ]);
    expect(shape.reminder_followups?.primaryKey).toEqual(['message_id']);
    expect(shape.reminder_followups?.indexes).toEqual([
      { name: 'reminder_followups_state_upped_at', columns: ['state', 'upped_at'], unique: false },
    ]);
    expect(shape.gateway_sessions?.primaryKey).toEqual(['shard_id']);
    expect(shape.gateway_sessions?.indexes).toEqual([]);
    expect(shape.gateway_guilds?.primaryKey).toEqual(['guild_id']);
    expect(shape.gateway_guilds?.indexes).toEqual([
      { name: 'gateway_guilds_shard', columns: ['shard_id'], unique: false },
    ]);
    expect(shape.personal_reminders?.primaryKey).toEqual(['guild_id', 'user_id']);
    expect(shape.personal_reminders?.indexes).toEqual([
      { name: 'personal_reminders_pending_due_at', columns: ['due_at'], unique: false },
    ]);
    // A text primary key accepts NULL on SQLite unless told otherwise.
    for (const table of Object.values(shape)) {
      for (const key of table.primaryKey) {
        expect(table.columns.find((c) => c.name === key)?.nullable).toBe(false);
      }
    }
  });

  it('tells the type classes apart, and knows no type it has not been taught', () => {
    expect(typeClass('BIGINT')).toBe('integer');
    expect(typeClass('character varying')).toBe('text');
    expect(() => typeClass('double precision')).toThrow();
  });

  it('runs its migrations in the order of their names', () => {
    const names = Object.keys(MIGRATIONS);
    expect(names).toEqual([...names].sort());
    expect(names.every((n) => /^\d{3}-[a-z-]+$/.test(n))).toBe(true);
  });
});

/**
 * The order InteractionsFirst (src/discord/gateway-strategy.ts) gives the gateway's events: each
 * interaction goes to the acknowledger at once; discord.js still gets every event, in the order
 * the shards emitted them, once the interactions arriving together have all been acknowledged
 * (or HOLD_MS has passed), a slice at a time. Driven with a hand-turned clock and event loop.
 */
import { describe, expect, it } from 'vitest';
import { HOLD_MS, InteractionsFirst, SLICE_MS } from '../../src/discord/gateway-strategy.js';

interface Event {
  name: string;
  interaction?: boolean;
  /** Clock time emitting it takes (discord.js building an interaction, say). */
  cost?: number;
  fails?: boolean;
}

function rig() {
  let now = 0;
  let turns: Array<() => void> = [];
  const log: string[] = [];
  const errors: string[] = [];
  const events = new InteractionsFirst<string, Event>({
    isInteraction: (_, e) => e.interaction === true,
    onInteraction: (e) => log.push(`ack ${e.name}`),
    emit: (_, e) => {
      now += e.cost ?? 0;
      if (e.fails) throw new Error(`discord.js failed on ${e.name}`);
      log.push(`emit ${e.name}`);
    },
    onError: (err, event) => errors.push(`${event}: ${(err as Error).message}`),
    now: () => now,
    defer: (callback) => turns.push(callback),
  });
  return {
    events,
    log,
    errors,
    receive: (...list: Event[]) => {
      for (const e of list) events.receive('dispatch', e);
    },
    /** One turn of the event loop: what was deferred runs, after `ms` of reading. */
    turn(ms = 0): void {
      now += ms;
      const due = turns;
      turns = [];
      for (const callback of due) callback();
    },
    advance(ms: number): void {
      now += ms;
    },
    pendingTurns: () => turns.length,
  };
}

const interaction = (name: string, cost = 0): Event => ({ name, interaction: true, cost });

describe('InteractionsFirst', () => {
  it('passes other events straight through while nothing is held', () => {
    const r = rig();
    r.receive({ name: 'GUILD_CREATE' }, { name: 'GUILD_UPDATE' });
    expect(r.log).toEqual(['emit GUILD_CREATE', 'emit GUILD_UPDATE']);
    expect(r.pendingTurns()).toBe(0);
  });

  it('acknowledges every interaction of a burst before discord.js sees any, and keeps the order', () => {
    const r = rig();
    r.receive(interaction('i1'), { name: 'GUILD_DELETE' }, interaction('i2'));
    expect(r.log).toEqual(['ack i1', 'ack i2']);
    // The next read brings more of the burst: still held.
    r.turn(1);
    r.receive(interaction('i3'));
    r.turn(1);
    expect(r.log).toEqual(['ack i1', 'ack i2', 'ack i3']);
    // A turn with nothing new: everything goes, in the order it came.
    r.turn(1);
    expect(r.log).toEqual([
      'ack i1',
      'ack i2',
      'ack i3',
      'emit i1',
      'emit GUILD_DELETE',
      'emit i2',
      'emit i3',
    ]);
    expect(r.events.held).toBe(0);
    expect(r.pendingTurns()).toBe(0);
  });

  it('an event after a held one waits behind it, even when it is not an interaction', () => {
    const r = rig();
    r.receive(interaction('i1'));
    r.receive({ name: 'GUILD_DELETE' });
    expect(r.log).toEqual(['ack i1']);
    r.turn();
    r.turn();
    expect(r.log).toEqual(['ack i1', 'emit i1', 'emit GUILD_DELETE']);
  });

  it(`holds at most ${HOLD_MS} ms while interactions keep coming`, () => {
    const r = rig();
    r.receive(interaction('first'));
    for (let i = 0; i < 20 && !r.log.includes('emit first'); i++) {
      r.turn(10);
      r.receive(interaction(`more${i}`));
    }
    const emitted = r.log.indexOf('emit first');
    expect(emitted).toBeGreaterThan(0);
    // Held through the turns that brought more (one each 10 ms), released in the turn the first
    // had waited HOLD_MS: the first and the HOLD_MS / 10 - 1 that came while it was held.
    const acksBefore = r.log.slice(0, emitted).filter((line) => line.startsWith('ack')).length;
    expect(acksBefore).toBe(HOLD_MS / 10);
  });

  it(`releases held events ${SLICE_MS} ms at a time, reading in between`, () => {
    const r = rig();
    r.receive(...Array.from({ length: 10 }, (_, i) => interaction(`i${i}`, 1.5)));
    r.turn();
    r.turn();
    // 1.5 ms each: three fit in a slice (the third crosses it), then the loop reads again.
    expect(r.log.filter((line) => line.startsWith('emit'))).toEqual(['emit i0', 'emit i1', 'emit i2']);
    r.receive(interaction('late'));
    expect(r.log.at(-1)).toBe('ack late');
    for (let i = 0; i < 10; i++) r.turn();
    expect(r.log.filter((line) => line.startsWith('emit'))).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `emit i${i}`),
      'emit late',
    ]);
  });

  it('goes on past an event discord.js fails on, and reports it', () => {
    const r = rig();
    r.receive(interaction('i1'), { name: 'BROKEN', fails: true }, interaction('i2'));
    r.turn();
    r.turn();
    expect(r.log).toEqual(['ack i1', 'ack i2', 'emit i1', 'emit i2']);
    expect(r.errors).toEqual(['dispatch: discord.js failed on BROKEN']);
  });

  it('flush hands over everything held at once (the shards are being destroyed)', () => {
    const r = rig();
    r.receive(interaction('i1'), { name: 'CLOSED' });
    r.events.flush();
    expect(r.log).toEqual(['ack i1', 'emit i1', 'emit CLOSED']);
    r.turn();
    expect(r.log).toHaveLength(3);
  });
});

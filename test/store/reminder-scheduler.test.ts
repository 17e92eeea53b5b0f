/**
 * The reminder scheduler against the store, on both engines, with a sender that records: what a
 * user would notice is a reminder posted once, on time, and a failure recorded, never lost.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReminderScheduler, type ReminderSender } from '../../src/features/reminders/scheduler.js';
import type { Claim, Reminder } from '../../src/store/index.js';
import { ReminderRepository, type Store } from '../../src/store/index.js';
import type { SendOutcome } from '../../src/tasks/outbox.js';
import { captureLogger } from '../support/logs.js';
import { eventually } from '../support/wait.js';
import { ENGINES, freshStore } from './places.js';

/** Until the assertions pass (within `ms`): eventually() for a probe that asserts. */
function until(assertions: () => unknown, ms = 3_000): Promise<true> {
  return eventually(
    async () => {
      await assertions();
      return true as const;
    },
    ms,
    'the assertions to pass',
  );
}

const GUILDS = ['722424773233213460', '722424773233213461', '722424773233213462'];
const USER = '525366699969478676';

class RecordingSender implements ReminderSender {
  readonly sent: Array<{ reminder: Reminder; claim: Claim; at: number }> = [];
  outcome: (reminder: Reminder) => SendOutcome | Promise<SendOutcome> = () => ({ kind: 'sent' });
  async send(reminder: Reminder, claim: Claim): Promise<SendOutcome> {
    this.sent.push({ reminder, claim, at: Date.now() });
    return this.outcome(reminder);
  }
}

describe.each(ENGINES)('the reminder scheduler (%s)', (engine) => {
  let store: Store;
  let another: () => Promise<Store>;
  let done: () => Promise<void>;
  let reminders: ReminderRepository;
  const schedulers: ReminderScheduler[] = [];

  beforeEach(async () => {
    ({ store, another, done } = await freshStore(engine));
    reminders = new ReminderRepository(store);
  });
  afterEach(async () => {
    await Promise.all(schedulers.splice(0).map((s) => s.stop()));
    await done();
  });

  function scheduler(
    sender: ReminderSender,
    options: Partial<ConstructorParameters<typeof ReminderScheduler>[0]> = {},
  ) {
    const s = new ReminderScheduler({
      reminders,
      sender,
      logger: captureLogger().logger,
      owner: `test-${schedulers.length}`,
      pollMs: 200,
      horizonMs: 1_000,
      ...options,
    });
    schedulers.push(s);
    return s;
  }

  it('sends at start what fell due while the bot was down, once each', async () => {
    const now = Date.now();
    for (const [i, guildId] of GUILDS.entries()) {
      await reminders.scheduleGuild(guildId, { dueAt: now - 60_000 * (i + 1), nextUpAt: now }, now);
    }
    await reminders.togglePersonal(GUILDS[0]!, USER, now - 1_000, now);
    const sender = new RecordingSender();
    scheduler(sender).start();
    await until(() => expect(sender.sent).toHaveLength(4));
    await new Promise((r) => setTimeout(r, 500));
    expect(sender.sent).toHaveLength(4);
    expect((await reminders.getGuild(GUILDS[0]!))?.state).toBe('sent');
    expect((await reminders.getPersonal(GUILDS[0]!, USER))?.state).toBe('sent');
  });

  it('sends a reminder within a second of its due time, with no timer per reminder', async () => {
    const sender = new RecordingSender();
    const s = scheduler(sender, { pollMs: 5_000, horizonMs: 10_000 });
    s.start();
    const dueAt = Date.now() + 700;
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt, nextUpAt: dueAt }, Date.now());
    // Scheduled after the first look, due before the next: only the wake brings it in time.
    s.wake(dueAt);
    await until(() => expect(sender.sent).toHaveLength(1), 3_000);
    const late = sender.sent[0]!.at - dueAt;
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(1_000);
  });

  it('keeps only the due-soon window in memory', async () => {
    const now = Date.now();
    for (let i = 0; i < 300; i++) {
      await reminders.scheduleGuild(
        `7224247732332${String(10_000 + i)}`,
        { dueAt: now + 3_600_000 + i, nextUpAt: now },
        now,
      );
    }
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now + 100, nextUpAt: now }, now);
    const sender = new RecordingSender();
    const s = scheduler(sender);
    s.start();
    await until(() => expect(sender.sent).toHaveLength(1));
    // The sent one is let go once its send is recorded, a moment after the sender saw it.
    await until(() => expect(s.held).toBe(0));
  });

  it('follows the latest answer: a reminder moved later is not sent at its old time', async () => {
    const now = Date.now();
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now + 300, nextUpAt: now }, now);
    const sender = new RecordingSender();
    scheduler(sender).start();
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now + 3_600_000, nextUpAt: now }, now + 1);
    await new Promise((r) => setTimeout(r, 900));
    expect(sender.sent).toHaveLength(0);
  });

  it('records a failure with its reason, and does not send it again', async () => {
    const now = Date.now();
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now - 1, nextUpAt: now }, now);
    const sender = new RecordingSender();
    sender.outcome = () => ({ kind: 'failed', reason: 'channel-deleted' });
    scheduler(sender).start();
    await until(async () => expect((await reminders.getGuild(GUILDS[0]!))?.failure).toBe('channel-deleted'));
    await new Promise((r) => setTimeout(r, 500));
    expect(sender.sent).toHaveLength(1);
    expect((await reminders.getGuild(GUILDS[0]!))?.state).toBe('failed');
  });

  it('tries a transient failure again after a backoff, well before its claim would run out, with the same nonce', async () => {
    const now = Date.now();
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now - 1, nextUpAt: now }, now);
    const sender = new RecordingSender();
    let calls = 0;
    sender.outcome = () => (++calls === 1 ? { kind: 'retry', detail: 'discord 503' } : { kind: 'sent' });
    scheduler(sender, { leaseMs: 20_000, pollMs: 20_000, retryBaseMs: 300 }).start();
    await until(() => expect(sender.sent).toHaveLength(2), 3_000);
    expect(sender.sent[1]!.at - sender.sent[0]!.at).toBeGreaterThanOrEqual(140);
    expect(sender.sent[1]!.claim.nonce).toBe(sender.sent[0]!.claim.nonce);
    await until(async () => expect((await reminders.getGuild(GUILDS[0]!))?.state).toBe('sent'));
  });

  it('takes over the claim of a process that died, with its nonce', async () => {
    const now = Date.now();
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now - 1, nextUpAt: now }, now);
    const dead = await reminders.claim({ kind: 'guild', guildId: GUILDS[0]! }, 'dead-process', 300, now);
    expect(dead).toBeDefined();
    const sender = new RecordingSender();
    scheduler(sender).start();
    await until(() => expect(sender.sent).toHaveLength(1), 3_000);
    expect(sender.sent[0]!.claim.nonce).toBe(dead!.nonce);
    expect(sender.sent[0]!.claim.by).not.toBe('dead-process');
  });

  it('two processes on one store never send a reminder twice', async () => {
    const now = Date.now();
    const count = 60;
    for (let i = 0; i < count; i++) {
      await reminders.scheduleGuild(
        `7224247732332${String(20_000 + i)}`,
        { dueAt: now + 200 + (i % 7) * 50, nextUpAt: now },
        now,
      );
    }
    const other = new ReminderRepository(await another());
    const a = new RecordingSender();
    const b = new RecordingSender();
    scheduler(a).start();
    scheduler(b, { reminders: other }).start();
    await until(() => expect(a.sent.length + b.sent.length).toBe(count), 8_000);
    await new Promise((r) => setTimeout(r, 500));
    const keys = [...a.sent, ...b.sent].map((s) => s.reminder.key.guildId);
    expect(new Set(keys).size).toBe(count);
    expect(keys).toHaveLength(count);
  });

  it('sends only for the guilds this process owns', async () => {
    const now = Date.now();
    for (const guildId of GUILDS)
      await reminders.scheduleGuild(guildId, { dueAt: now - 1, nextUpAt: now }, now);
    const sender = new RecordingSender();
    scheduler(sender, { ownsGuild: (id) => id === GUILDS[1] }).start();
    await until(() => expect(sender.sent).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 400));
    expect(sender.sent.map((s) => s.reminder.key.guildId)).toEqual([GUILDS[1]]);
  });

  it('a store that fails a look is looked at again; a sender that throws is retried, nothing unhandled', async () => {
    const now = Date.now();
    await reminders.scheduleGuild(GUILDS[0]!, { dueAt: now - 1, nextUpAt: now }, now);
    let failLook = true;
    const flaky = {
      dueSoon: (until: number, limit: number) => {
        if (failLook) {
          failLook = false;
          return Promise.reject(new Error('store down'));
        }
        return reminders.dueSoon(until, limit);
      },
      claim: reminders.claim.bind(reminders),
      markSent: reminders.markSent.bind(reminders),
      markFailed: reminders.markFailed.bind(reminders),
      retryAt: reminders.retryAt.bind(reminders),
    };
    const sender = new RecordingSender();
    let calls = 0;
    sender.outcome = () => {
      if (++calls === 1) throw new Error('boom');
      return { kind: 'sent' };
    };
    scheduler(sender, { reminders: flaky, leaseMs: 300 }).start();
    await until(async () => expect((await reminders.getGuild(GUILDS[0]!))?.state).toBe('sent'), 5_000);
    expect(sender.sent).toHaveLength(2);
  });
});

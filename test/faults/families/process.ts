/**
 * P rows: faults of the process itself, on the built bot as a child: a fatal gateway close, and a
 * SIGKILL while an /up is on its way, after which a second process finishes the up from the journal,
 * kept in the store: the SQLite file (P2–P4) or PostgreSQL (P2pg–P4pg).
 */

import { translator } from '../../../src/i18n/index.js';
import type { Engine } from '../../../src/store/index.js';
import { type InteractionHandle, isFinalAnswer } from '../../discord/index.js';
import { isEphemeral, LEVEL, liveMessages } from '../../e2e/harness.js';
import { type Emulator, IDS, type RecordedRequest } from '../../emulator/index.js';
import type { BotProcess } from '../../support/bot-process.js';
import { eventually, withTimeout } from '../../support/wait.js';
import {
  bumpsOf,
  childEnv,
  EN,
  firstEmbed,
  freshGuild,
  newUserRef,
  processHygiene,
  startWorld,
  type World,
} from '../fixtures.js';
import {
  Checks,
  type HoldingProxy,
  message,
  STACK_LINE,
  startBot,
  startHoldingProxy,
  track,
} from '../helpers.js';
import type { Family, Row } from '../runner.js';

const fatalCloseRow: Row = {
  id: 'P1',
  fault: 'gateway close 4004 (main.js)',
  expected: 'exits non-zero in a few s, one stderr line naming DISCORD_TOKEN, no stack',
  timeoutMs: 25_000,
  run: async () => {
    const c = new Checks();
    const world = await startWorld();
    const proc = startBot('P1', childEnv(world));
    let observed = '';
    try {
      await proc.ready();
      const closedAt = performance.now();
      const from = world.discord.gatewayLog.length;
      world.discord.disconnectShard(0, 4004);
      const exit = await withTimeout(proc.exited, 8_000, 'the process to exit after 4004');
      const exitMs = Math.round(exit.at - closedAt);
      c.that(exit.code !== null && exit.code !== 0, `exit code ${exit.code} (signal ${exit.signal})`);
      c.that(exitMs < 5_000, `exited ${exitMs} ms after the close`);
      const stderr = proc.stderr;
      c.that(/DISCORD_TOKEN/.test(stderr), `stderr does not name DISCORD_TOKEN: ${JSON.stringify(stderr)}`);
      c.that(!STACK_LINE.test(stderr), 'stderr has a stack trace');
      const stderrLines = stderr.split('\n').filter((l) => l.trim() !== '');
      c.that(stderrLines.length <= 2, `stderr has ${stderrLines.length} lines`);
      const again = world.discord.gatewayLog
        .slice(from)
        .filter((e) => e.kind === 'identify' || e.kind === 'resume');
      c.equal(again.length, 0, 'reconnect attempts after 4004');
      const stdoutStacks = proc.lines.filter((l) => l.stream === 'stdout' && /\\n\s+at /.test(l.raw)).length;
      const fatalLines = proc.lines.filter((l) => l.entry?.level === LEVEL.fatal).length;
      observed =
        `exit ${exit.code} after ${exitMs} ms; stderr ${JSON.stringify(stderrLines.join(' / '))}; ` +
        `${fatalLines} fatal log line(s), ${stdoutStacks} stack(s) in the JSON log`;
    } catch (err) {
      observed = `threw: ${message(err)}`;
      c.that(false, observed);
    }
    await proc.stop();
    processHygiene(world, [proc], c);
    await world.close();
    return { observed, problems: c.problems };
  },
};

interface KillPlan {
  id: string;
  fault: string;
  expected: string;
  /** 'cooldown' when A's up reached the directory (B's repeat is refused), else 'success'. */
  answer: 'cooldown' | 'success';
  /** Sets the trap up; returns what A's environment needs. */
  prepare: (world: World) => Promise<{ discordApi?: string; directoryApi?: string; proxy?: HoldingProxy }>;
  /** Resolves once A is where it must die; returns a description. */
  reached: (world: World, proxy: HoldingProxy | undefined, handle: InteractionHandle) => Promise<string>;
  /** After A died, before B starts: e.g. let the directory finish A's up. */
  afterKill?: (world: World, proxy: HoldingProxy | undefined, c: Checks) => Promise<void>;
  /**
   * Kill A the moment the proxy holds a request of it, from the proxy's own handler: where A
   * waits in a bound of its own (the up's 2 s for guild statistics), a test process starved of
   * CPU on a loaded machine could otherwise notice the hold only after A had moved on.
   */
  killOnHold?: boolean;
}

function postsToServer(emu: Emulator): RecordedRequest[] {
  return emu.requests.filter((r) => r.method === 'POST' && r.path === '/v2/server');
}

function killRow(plan: KillPlan, engine: Engine): Row {
  const onPostgres = engine === 'postgres';
  return {
    id: onPostgres ? `${plan.id}pg` : plan.id,
    postgres: onPostgres,
    fault: onPostgres ? `${plan.fault}, store on PostgreSQL` : plan.fault,
    expected: plan.expected,
    timeoutMs: 40_000,
    run: async () => {
      const c = new Checks();
      const world = await startWorld(engine);
      // The presser reads Russian, the server English: a public success speaks the server's
      // language, a private "not yet" the presser's, after a restart as live.
      const t = plan.answer === 'success' ? EN : translator('ru');
      const procs: BotProcess[] = [];
      let proxy: HoldingProxy | undefined;
      let observed = '';
      try {
        const setup = await plan.prepare(world);
        proxy = setup.proxy;
        const env = childEnv(world, setup);
        const a = startBot(`${plan.id}-A`, env);
        procs.push(a);
        await a.ready();
        // A saves its session once its shard is ready: B resumes it (gateway-sessions.ts).
        await eventually(
          async () => ((await world.savedSessions()).length > 0 ? true : undefined),
          5_000,
          "A's gateway session to be saved",
        );
        if (plan.killOnHold && proxy) {
          const holds = proxy.hold;
          proxy.hold = (method, url) => {
            const held = holds?.(method, url) ?? false;
            if (held) a.kill('SIGKILL');
            return held;
          };
        }
        const bumpsBefore = bumpsOf(world.emu, IDS.serverFresh);
        const handle = world.discord.sendCommand({
          guildId: freshGuild.id,
          name: 'up',
          user: newUserRef('kill'),
          locale: 'ru',
        });
        const deferral = await handle.firstResponse(3_000);
        c.equal(deferral.type, 5, 'A deferred');
        const where = await plan.reached(world, proxy, handle);
        // At once: A may be inside a bound of its own (the up's 2 s for guild statistics). What
        // its journal held is read after: a dead process writes nothing more.
        a.kill('SIGKILL');
        const exitA = await withTimeout(a.exited, 3_000, 'A to die');
        const journaled = await world.journaled();
        c.equal(exitA.signal, 'SIGKILL', 'A ended by');
        c.none(
          handle
            .requests()
            .filter(isFinalAnswer)
            .map((r) => `${r.method} ${r.path}`),
          'A answered before it died',
        );
        await plan.afterKill?.(world, proxy, c);
        if (proxy) proxy.hold = undefined;
        const b = startBot(`${plan.id}-B`, env);
        procs.push(b);
        const bStarted = performance.now();
        const bFrom = world.discord.gatewayLog.length;
        await b.ready();
        const bReadyMs = Math.round(performance.now() - bStarted);
        const bSessions = world.discord.gatewayLog.slice(bFrom);
        c.equal(bSessions.filter((e) => e.kind === 'identify').length, 0, 'B identified');
        c.equal(bSessions.filter((e) => e.kind === 'resumed').length, 1, "B resumed A's session");
        const final = await handle.waitFor(isFinalAnswer, 5_000).catch(() => undefined);
        const bumpsAfter = bumpsOf(world.emu, IDS.serverFresh);
        c.equal(bumpsAfter - bumpsBefore, 1, 'bumps added');
        const held = journaled.includes(handle.id) ? 'the up' : `${journaled.length} entries`;
        const journalSaw = `journal held ${held}`;
        if (!c.that(final !== undefined, `B did not answer the interaction (${journalSaw} when A died)`)) {
          observed =
            `${where}; A killed; ${journalSaw}; B ready in ${bReadyMs} ms, no answer within 5 s; ` +
            `bumps +${bumpsAfter - bumpsBefore}`;
        } else {
          c.that((final?.at ?? 0) > bStarted, 'the answer came before B started');
          const view = handle.view();
          const live = liveMessages(view);
          c.equal(live.length, 1, 'messages left');
          const shown = live[0];
          const embed = firstEmbed(shown);
          c.equal(embed?.footer?.text, t('up.afterRestart'), 'the restart note');
          c.that(
            (embed?.title ?? '').endsWith(t(`up.title.${plan.answer}`)),
            `answer title ${JSON.stringify(embed?.title)}, expected ${plan.answer}`,
          );
          c.equal(shown ? isEphemeral(shown) : undefined, plan.answer !== 'success', 'answer is private');
          const line = await b
            .waitForEntry(
              (e) => e.msg === 'answered an up from before the restart',
              3_000,
              'the recovery line',
            )
            .catch(() => undefined);
          c.equal(line?.outcome, plan.answer, 'recovery line outcome');
          await eventually(
            async () => ((await world.journaled()).length === 0 ? true : undefined),
            3_000,
            'the journal to be emptied',
          ).catch(() => c.that(false, 'the journal still holds the up'));
          observed =
            `${where}; A killed (${journalSaw}); ` +
            `B resumed, answered ${shown && isEphemeral(shown) ? 'privately' : 'publicly'} "${embed?.title}" ` +
            `${Math.round((final?.at ?? 0) - bStarted)} ms after start (ready ${bReadyMs}); ` +
            `bumps +${bumpsAfter - bumpsBefore}; ` +
            `${postsToServer(world.emu).length} POST /server reached the directory`;
        }
      } catch (err) {
        observed = `threw: ${message(err)}`;
        c.that(false, observed);
      }
      const exits = await Promise.all(procs.map((p) => p.stop()));
      const bExit = exits[1];
      if (bExit) c.equal(bExit.code, 0, 'B exit code on SIGTERM');
      processHygiene(world, procs, c);
      await proxy?.close();
      await world.close();
      return { observed, problems: c.problems };
    },
  };
}

const killPlans: KillPlan[] = [
  {
    id: 'P2',
    fault: 'SIGKILL while POST /server is at the directory',
    expected: 'B repeats, the cooldown refuses, private "Not yet" + note; bumps +1',
    answer: 'cooldown',
    prepare: async (world) => {
      // The directory raises the server at once and holds its answer: A is killed before it learns
      // of the up, however late the kill comes on a busy machine.
      world.emu.faults.add({ kind: 'late-answer', ms: 60_000, method: 'POST', path: /^\/server$/, times: 1 });
      return {};
    },
    reached: async (world) => {
      await eventually(
        () => postsToServer(world.emu).find((r) => r.body !== ''),
        10_000,
        'the directory to receive POST /server',
      );
      return 'POST /server received by the directory';
    },
    afterKill: async (world, _proxy, c) => {
      // The directory raised the server (the bumps say so at the end) and A never heard back.
      c.equal(postsToServer(world.emu)[0]?.status, 0, 'status answered to the up A sent');
    },
  },
  {
    id: 'P3',
    fault: 'SIGKILL while POST /server is held on the way',
    expected: 'B raises the server: public success + note; bumps +1',
    answer: 'success',
    prepare: async (world) => {
      const proxy = await startHoldingProxy(world.emu.url);
      track(proxy.close);
      proxy.hold = (method, url) => method === 'POST' && url.startsWith('/v2/server');
      return { proxy, directoryApi: proxy.url };
    },
    reached: async (world, proxy, _handle) => {
      await eventually(() => proxy?.held.find((r) => r.body !== ''), 10_000, 'POST /server to be held');
      const reachedDirectory = postsToServer(world.emu).length;
      if (reachedDirectory !== 0) throw new Error('the POST reached the directory');
      return 'POST /server held by the proxy (never reached the directory)';
    },
  },
  {
    id: 'P4',
    fault: 'SIGKILL while /up gathers guild stats',
    expected: 'B raises the server: public success + note; bumps +1',
    answer: 'success',
    killOnHold: true,
    prepare: async (world) => {
      const proxy = await startHoldingProxy(new URL(world.discord.restUrl).origin);
      track(proxy.close);
      const guildPath = `/api/v10/guilds/${freshGuild.id}`;
      proxy.hold = (method, url) =>
        method === 'GET' && (url === guildPath || url.startsWith(`${guildPath}?`));
      return { proxy, discordApi: `${proxy.url}/api` };
    },
    reached: async (world, proxy) => {
      await eventually(() => proxy?.held[0], 10_000, 'GET /guilds/:id to be held');
      if (postsToServer(world.emu).length !== 0) throw new Error('the POST reached the directory');
      return 'GET /guilds/:id held (stats being gathered)';
    },
  },
];

export const processFaults: Family = {
  title: 'the bot process',
  stage: 2,
  rows: [fatalCloseRow, ...killPlans.map((plan) => killRow(plan, 'sqlite'))],
};

/** The same kills with the store on PostgreSQL: the journal's guarantees hold on both engines. */
export const processFaultsOnPostgres: Family = {
  title: 'the bot process, store on PostgreSQL',
  stage: 3,
  rows: killPlans.map((plan) => killRow(plan, 'postgres')),
};

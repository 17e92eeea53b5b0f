/** G rows: the gateway closes a shard; the bot resumes or identifies again and answers the next command. */
import type { ViewedMessage } from '../../discord/index.js';
import { isEphemeral, LEVEL, liveMessages } from '../../e2e/harness.js';
import { eventually } from '../../support/wait.js';
import { firstEmbed, inHarness, lookUpKerdoku } from '../fixtures.js';
import type { Family, Row } from '../runner.js';

type Recovery = 'resume' | 'identify' | 'resume refused, identify';

const RECOVERY_KINDS: Record<Recovery, string[]> = {
  resume: ['resume', 'resumed'],
  identify: ['identify', 'ready'],
  'resume refused, identify': ['resume', 'invalid_session', 'identify', 'ready'],
};

function gatewayRow(id: string, code: number, recovery: Recovery): Row {
  return {
    id,
    fault: `gateway close ${code}`,
    expected: `${recovery}, then /bot answered`,
    timeoutMs: 25_000,
    run: () =>
      inHarness({}, async (h, c) => {
        const from = h.discord.gatewayLog.length;
        const closedAt = performance.now();
        h.discord.disconnectShard(0, code);
        const back = await eventually(
          () => h.discord.gatewayLog.slice(from).find((e) => e.kind === 'ready' || e.kind === 'resumed'),
          15_000,
          'shard 0 to be back',
        );
        const backMs = Math.round(back.at - closedAt);
        const kinds = h.discord.gatewayLog
          .slice(from)
          .map((e) => e.kind)
          .filter((k) => k !== 'connect' && k !== 'close');
        c.equal(kinds, RECOVERY_KINDS[recovery], 'gateway log after the close');
        const answer = await lookUpKerdoku(h, 10_000);
        c.equal(answer.outcome, 'shown', 'outcome of /bot after the reconnect');
        const live = liveMessages(answer.view);
        c.that(
          live.length === 1 && !isEphemeral(live[0] as ViewedMessage),
          'the card is not one public message',
        );
        c.equal(firstEmbed(live[0])?.title, 'Bot kerdoku', 'card title');
        const fatal = h.entries().filter((e) => e.level >= LEVEL.error);
        c.none(
          fatal.map((e) => String(e.msg)),
          'error or fatal lines',
        );
        const warned = h.entries().some((e) => e.msg === 'shard disconnected' && e.code === code);
        const note = warned ? ' (warn logged)' : '';
        return `${kinds.join(' → ')} after ${backMs} ms${note}; /bot ${answer.outcome}`;
      }),
  };
}

export const gatewayCloses: Family = {
  title: 'Discord gateway closes',
  stage: 1,
  rows: [
    gatewayRow('G1', 1000, 'identify'),
    gatewayRow('G2', 1006, 'resume'),
    gatewayRow('G3', 4000, 'resume'),
    gatewayRow('G4', 4007, 'identify'),
    gatewayRow('G5', 4009, 'resume refused, identify'),
  ],
};

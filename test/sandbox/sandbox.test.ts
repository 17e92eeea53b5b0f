import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { DiscordStandIn } from '../discord/index.js';
import { assertNoViolations } from '../discord/spec/conformance.js';
import { IDS } from '../emulator/index.js';
import {
  buttonsOf,
  createStyle,
  humanizeTimestamps,
  relativeTime,
  renderMessage,
  wantsColor,
} from './render.js';
import { runSandbox, SCRIPT } from './session.js';

const dir = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function collector(): { out: Writable; text: () => string } {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return { out, text: () => chunks.join('') };
}

/** The part of the transcript from a step's header to the next one. */
function stepText(transcript: string, step: number): string {
  const start = transcript.indexOf(`━━ ${step}/${SCRIPT.length} `);
  expect(start, `step ${step} in the transcript`).toBeGreaterThanOrEqual(0);
  const end = transcript.indexOf('━━ ', start + 3);
  return transcript.slice(start, end === -1 ? undefined : end);
}

describe('runSandbox', () => {
  // Each test: its own 20 s plus START_BOUND_MS for the start-up on a busy machine.
  it('plays the whole session and writes what a user would see', async () => {
    const { out, text } = collector();
    const logFile = join(dir, 'bot.log');
    let standIn: DiscordStandIn | undefined;
    await runSandbox({ out, logFile, timeoutMs: 8_000, setUp: (stage) => (standIn = stage.standIn) });
    const transcript = text();
    assertNoViolations(standIn?.specViolations() ?? []);

    // Not a terminal: no ANSI escapes at all.
    expect(transcript).not.toContain('\u001b[');
    expect(transcript).toContain('127.0.0.1');

    // v3: /up says where to raise the server, and never that it was raised.
    const up = stepText(transcript, 1);
    expect(up).toContain('/up');
    expect(up).toContain('Raise this server on BotiCord');
    expect(up).toContain('Raise on BotiCord → https://boticord.top/server/boticord');
    expect(up).toContain('only you can see this');
    expect(up).not.toContain('Server raised');

    const kerdoku = stepText(transcript, 2);
    expect(kerdoku).toContain('/bot ref:kerdoku');
    expect(kerdoku).toContain('Bot Kerdoku');
    // An embed field (Prefix: `?`) or, in a Components V2 card, the text's markdown (**Prefix:** `?`).
    expect(kerdoku).toMatch(/Prefix:(\*\*)? `\?`/);
    expect(kerdoku).toMatch(/Rating:(\*\*)? ★★★★★ 4\.5 · 2 ratings/);
    expect(kerdoku).toContain('Support server → https://discord.gg/5qXgJvr');
    expect(kerdoku).toContain('[Comments]');

    expect(stepText(transcript, 3)).toContain('Server BotiCord Community');

    // The directory's webhook: the test button and a comment, announced in the channel.
    const webhook = transcript.slice(transcript.indexOf('━━ webhook'));
    expect(webhook).toContain('the directory delivers the test button: the bot answers 200');
    expect(webhook).toContain('Webhook connected');
    expect(webhook).toContain('New comment on the directory');
    expect(webhook).toContain('\\*\\*friendly\\*\\*');
    // The directory's v3 notifications: a review given on the site, announced with its rating.
    const notified = transcript.slice(transcript.indexOf('━━ notifications'));
    expect(notified).toContain('New review on BotiCord');
    expect(notified).toContain('★★★★★');
    expect(notified).toContain('\\*\\*Заходите\\*\\*');
    const profile = stepText(transcript, 4);
    expect(profile).toContain('Profile of Cipherka');
    expect(profile).toContain('178404926869733376');
    expect(profile).toContain('Servers');

    expect(stepText(transcript, 5)).toContain(`/bot ref:${IDS.botManyComments}`);
    const comments = stepText(transcript, 6);
    expect(comments).toContain('clicks [Comments]');
    expect(comments).toMatch(/Page 1 of \d/);
    expect(comments).toContain('★');
    expect(comments).toContain('[Previous] (disabled)');
    expect(comments).toContain('only you can see this');

    const next = stepText(transcript, 7);
    expect(next).toContain('clicks [Next]');
    expect(next).toContain('the bot edits that message');
    expect(next).toMatch(/Page 2 of \d/);
    expect(next).toMatch(/<t:\d+:R> \[\d+ years? ago\]/);

    expect(transcript).toContain(`✓ ${SCRIPT.length} of ${SCRIPT.length} steps as expected`);
    expect(transcript).toContain(`Bot logs: ${logFile}`);
    expect(existsSync(logFile)).toBe(true);
    const log = readFileSync(logFile, 'utf8');
    expect(log.match(/"interaction handled"/g)).toHaveLength(SCRIPT.length);
    expect(log).not.toContain('emu-v3-staff');
  }, 80_000);

  it('stops at a step whose answer is not the expected one and names it', async () => {
    const { out, text } = collector();
    const run = runSandbox({
      out,
      logFile: null,
      setUp: ({ emulator }) =>
        emulator.faults.add({ kind: 'status', status: 404, path: new RegExp(`^/bots/${IDS.plainBot}$`) }),
    });
    await expect(run).rejects.toThrow(
      new RegExp(`^step 2/${SCRIPT.length} \\(/bot ref:kerdoku\\): expected the outcome shown, got error:`),
    );
    const transcript = text();
    expect(stepText(transcript, 2)).toContain('This bot is not in the directory.');
    expect(transcript).not.toContain(`━━ 3/${SCRIPT.length}`);
    expect(transcript).toContain(`✗ 1 of ${SCRIPT.length} steps as expected`);
  }, 80_000);

  it('bounds the wait for an answer', async () => {
    const { out } = collector();
    const run = runSandbox({
      out,
      logFile: null,
      timeoutMs: 1_000,
      // The bot gives up on the directory after half the bound, but tries a read three times.
      setUp: ({ emulator }) =>
        emulator.faults.add({ kind: 'stall', ms: 20_000, path: new RegExp(`^/bots/${IDS.plainBot}$`) }),
    });
    await expect(run).rejects.toThrow(
      `step 2/${SCRIPT.length} (/bot ref:kerdoku): timed out after 1000 ms waiting for the bot's answer`,
    );
  }, 80_000);

  it('fails with a clear message when aborted, and still shuts down', async () => {
    const { out, text } = collector();
    const signal = AbortSignal.abort(new Error('interrupted'));
    await expect(runSandbox({ out, logFile: null, signal })).rejects.toThrow('interrupted');
    expect(text()).toContain(`✗ 0 of ${SCRIPT.length} steps as expected`);
  }, 80_000);
});

describe('the terminal renderer', () => {
  const plain = createStyle(false);
  const now = Date.UTC(2024, 0, 1);

  it('reads timestamps in brackets and leaves the markdown alone', () => {
    const unix = now / 1000 + 4 * 3600 - 1;
    expect(humanizeTimestamps(`**next** <t:${unix}:R>`, now, plain)).toBe(
      `**next** <t:${unix}:R> [in 4 hours]`,
    );
    expect(relativeTime(now - 3 * 86_400_000, now)).toBe('3 days ago');
    expect(relativeTime(now + 10_000, now)).toBe('in a few seconds');
    expect(humanizeTimestamps('<t:1704067200:D>', now, plain)).toMatch(/^<t:1704067200:D> \[.*202[34]\]$/);
  });

  it('renders embeds, fields, footers and buttons', () => {
    const lines = renderMessage(
      {
        embeds: [
          {
            title: 'Bot \\_x\\_',
            description: 'by <@178404926869733376>',
            fields: [{ name: 'Stats', value: 'a\nb' }],
            footer: { text: 'foot' },
          },
        ],
        components: [
          {
            type: 1,
            components: [
              { type: 2, style: 5, label: 'Site', url: 'https://example.com/' },
              { type: 2, style: 2, label: 'Next', custom_id: 'x', disabled: true },
            ],
          },
        ],
      },
      { nowMs: now, style: plain, names: new Map([['178404926869733376', 'Cipherka']]), indent: '' },
    );
    expect(lines).toEqual([
      '│ Bot \\_x\\_',
      '│ by <@178404926869733376> [@Cipherka]',
      '│',
      '│ Stats:',
      '│   a',
      '│   b',
      '│',
      '│ foot',
      'buttons:',
      '  Site → https://example.com/',
      '  [Next] (disabled)',
    ]);
  });

  it('renders a Components V2 message: container, section with thumbnail, separator, gallery, buttons', () => {
    const message = {
      flags: 1 << 15,
      components: [
        {
          type: 17,
          accent_color: 0x5865f2,
          components: [
            {
              type: 9,
              components: [
                { type: 10, content: '## Kerdoku' },
                { type: 10, content: 'by <@178404926869733376>' },
              ],
              accessory: {
                type: 11,
                media: { url: 'https://cdn.example/a.png' },
                description: 'Kerdoku avatar',
              },
            },
            { type: 14, divider: true, spacing: 1 },
            {
              type: 12,
              items: [
                { media: { url: 'attachment://chart.png' }, description: 'Votes per day' },
                { media: { url: 'https://cdn.example/img/b.png?size=64' } },
              ],
            },
            {
              type: 1,
              components: [
                { type: 2, style: 2, label: 'Vote', custom_id: 'vote:1' },
                { type: 2, style: 5, label: 'Site', url: 'https://example.com/' },
              ],
            },
          ],
        },
        { type: 10, content: 'updated' },
        {
          type: 9,
          components: [{ type: 10, content: 'More' }],
          accessory: { type: 2, style: 1, label: 'Next', custom_id: 'next' },
        },
      ],
    };
    const lines = renderMessage(message, {
      nowMs: now,
      style: plain,
      names: new Map([['178404926869733376', 'Cipherka']]),
      indent: '',
    });
    expect(lines).toEqual([
      '│ ## Kerdoku',
      '│ by <@178404926869733376> [@Cipherka]',
      '│ [thumbnail: Kerdoku avatar]',
      `│ ${'─'.repeat(24)}`,
      '│ [image: chart.png — Votes per day]',
      '│ [image: b.png]',
      '│ buttons:',
      '│   [Vote]',
      '│   Site → https://example.com/',
      '',
      'updated',
      'More',
      '[Next]',
    ]);
    // The container's bar in its accent colour, as an embed's.
    const coloured = renderMessage(message, { nowMs: now, style: createStyle(true), indent: '' });
    expect(coloured[0]).toContain('\u001b[38;2;88;101;242m│');
    // The buttons the sandbox can click, wherever they sit.
    expect(buttonsOf(message).map((b) => b.customId ?? b.url)).toEqual([
      'vote:1',
      'https://example.com/',
      'next',
    ]);
    // Without the flag, components at the top level that are not rows still read as V2.
    const { flags: _flags, ...unflagged } = message;
    expect(renderMessage(unflagged, { nowMs: now, style: plain, indent: '' })[0]).toBe('│ ## Kerdoku');
  });

  it('colours only a terminal without NO_COLOR', () => {
    expect(wantsColor({ isTTY: true }, undefined)).toBe(true);
    expect(wantsColor({ isTTY: true }, '1')).toBe(false);
    expect(wantsColor({ isTTY: true }, '')).toBe(true);
    expect(wantsColor({}, undefined)).toBe(false);
    expect(createStyle(true).bold('x')).toBe('\u001b[1mx\u001b[22m');
  });
});

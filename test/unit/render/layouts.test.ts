/**
 * The Components V2 layouts: the helpers that keep any layout inside Discord's limits, and every
 * message the bot lays out that way (cards, comments, the leaderboard, /settings, the directory's
 * events, reminders), each checked in both languages against Discord's rules, hostile input
 * included.
 */
import { type APIMessageTopLevelComponent, ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { renderLeaderboard, type Standing } from '../../../src/features/history/leaderboard.js';
import { reminderLayout } from '../../../src/features/reminders/send.js';
import { renderConfirmation, renderOverview } from '../../../src/features/settings/render.js';
import type { DirectoryEvent } from '../../../src/features/webhooks/events.js';
import { renderEvent } from '../../../src/features/webhooks/render.js';
import { renderServerCard } from '../../../src/render/cards.js';
import { COLORS } from '../../../src/render/colors.js';
import {
  componentCount,
  container,
  facts,
  fitLayout,
  gallery,
  LAYOUT_LIMITS,
  layoutTextLength,
  section,
  separator,
  text,
  thumbnail,
} from '../../../src/render/layout.js';
import { isLayout, type LayoutMessage, messageFields } from '../../../src/render/message.js';
import {
  CONTROLS,
  en,
  expectNoPing,
  expectWithinLimits,
  HOSTILE_NAME,
  RLO,
  realServer,
  ru,
  snowflake,
  view,
} from './helpers.js';

const LANGUAGES = [
  ['en', en],
  ['ru', ru],
] as const;

describe('layout helpers', () => {
  it('leave out what Discord refuses: blank texts, non-http media, a section without an accessory', () => {
    expect(text('  \n')).toBeNull();
    expect(thumbnail('javascript:alert(1)')).toBeNull();
    expect(thumbnail('attachment://../x.png')).toBeNull();
    expect(thumbnail('attachment://ups.png', 'chart')).toEqual({
      type: ComponentType.Thumbnail,
      media: { url: 'attachment://ups.png' },
      description: 'chart',
    });
    expect(gallery([{ url: 'data:,x' }])).toBeNull();
    const alone = section([text('a'), null, text('b')], null);
    expect(alone.map((c) => c.type)).toEqual([ComponentType.TextDisplay, ComponentType.TextDisplay]);
    // Four texts beside a thumbnail: three in the section (its most), the fourth under it.
    const four = section([text('1'), text('2'), text('3'), text('4')], thumbnail('https://x.test/a.png'));
    expect(four.map((c) => c.type)).toEqual([ComponentType.Section, ComponentType.TextDisplay]);
  });

  it('drop separators that would part nothing', () => {
    const box = container(COLORS.info, [
      separator(),
      text('a'),
      separator(),
      separator(),
      null,
      text('b'),
      separator(),
    ]);
    expect(box.components.map((c) => c.type)).toEqual([
      ComponentType.TextDisplay,
      ComponentType.Separator,
      ComponentType.TextDisplay,
    ]);
  });

  it('write facts a line each, a value of several lines under its label', () => {
    expect(
      facts([
        ['Prefix', '`!`'],
        ['Empty', ' '],
        ['Bots', '<@1>\n<@2>'],
        ['None', null],
      ]),
    ).toBe('**Prefix:** `!`\n**Bots:**\n<@1>\n<@2>');
    expect(facts([['x', null]])).toBeNull();
  });

  it('fitLayout cuts the longest text first to 4000 characters, then components to 40', () => {
    const long = container(COLORS.info, [text('a'.repeat(3900)), text('b'.repeat(1000)), text('short')]);
    const fitted = fitLayout([long]);
    expect(layoutTextLength(fitted)).toBeLessThanOrEqual(LAYOUT_LIMITS.text);
    const [box] = fitted;
    if (box?.type !== ComponentType.Container) throw new Error('container expected');
    const contents = box.components.map((c) => (c.type === ComponentType.TextDisplay ? c.content : ''));
    expect(contents[0]?.length).toBeLessThan(3900);
    expect(contents[0]?.endsWith('…')).toBe(true);
    expect(contents[1]).toBe('b'.repeat(1000));
    expect(contents[2]).toBe('short');
    // The input is left as it was.
    expect(long.components[0]).toMatchObject({ content: 'a'.repeat(3900) });

    const crowded = container(
      COLORS.info,
      Array.from({ length: 60 }, (_, i) => text(`line ${i}`)),
    );
    const trimmed = fitLayout([crowded]);
    expect(componentCount(trimmed)).toBe(LAYOUT_LIMITS.components);
    expect(JSON.stringify(trimmed)).toContain('line 0');
    expect(JSON.stringify(trimmed)).not.toContain('line 59');
  });

  it('counts nested components as Discord does', () => {
    const layout: APIMessageTopLevelComponent[] = [
      container(COLORS.info, [
        section([text('a'), text('b')], thumbnail('https://x.test/a.png')),
        separator(),
        text('c'),
      ]),
    ];
    // container, section, two texts, thumbnail, separator, text
    expect(componentCount(layout)).toBe(7);
  });

  it('messageFields: a layout goes with the V2 flag and no content or embeds', () => {
    const layout: LayoutMessage = { layout: [container(COLORS.info, [text('x')])] };
    const fields = messageFields(layout);
    expect(fields.flags).toBe(1 << 15);
    expect('content' in fields).toBe(false);
    expect('embeds' in fields).toBe(false);
    expect(messageFields({ embeds: [], components: [] })).toEqual({
      content: '',
      embeds: [],
      components: [],
      flags: 0,
    });
  });
});

describe('every V2 message within Discord limits, in both languages', () => {
  const chartFile = { attachment: Buffer.from('png'), name: 'ups.png', description: 'Ups per day' };

  it.each(LANGUAGES)('the server card with its chart as a MediaGallery item with alt text (%s)', (_, t) => {
    const msg = renderServerCard(realServer(), t, t === ru ? 'ru' : 'en-US', {
      file: chartFile,
      title: t('upChart.title'),
      text: `<@${snowflake(1)}>: 3`,
    });
    expectWithinLimits(msg);
    expect(isLayout(msg)).toBe(true);
    expect(msg.files).toEqual([chartFile]);
    expect(view(msg).images).toEqual([{ url: 'attachment://ups.png', description: 'Ups per day' }]);
  });

  const standing = (members: number): Standing => ({
    period: 'month',
    since: 0,
    top: Array.from({ length: Math.min(members, 10) }, (_, i) => ({
      userId: snowflake(i),
      ups: 100 - i,
      firstAt: i,
    })),
    asker: members > 0 ? { rank: 1, ups: 100 } : null,
    totalUps: 1000,
    members,
  });

  it.each(LANGUAGES)('the leaderboard, with and without its chart, and empty (%s)', (_, t) => {
    const top = Array.from({ length: 10 }, (_, i) => snowflake(i));
    const withChart = renderLeaderboard(standing(40), t, { file: chartFile, text: 'x: 1', weekly: false });
    expectWithinLimits(withChart);
    expectNoPing(withChart, top);
    expect(view(withChart).images).toEqual([{ url: 'attachment://ups.png', description: 'Ups per day' }]);
    expect(view(withChart).fields.map((f) => f.name)).toEqual([t('leaderboard.youTitle')]);
    const plain = renderLeaderboard(standing(3), t);
    expectWithinLimits(plain);
    expect(plain.files).toBeUndefined();
    expect(view(plain).images).toEqual([]);
    const empty = renderLeaderboard(standing(0), t);
    expectWithinLimits(empty);
    expect(view(empty).description).toBe(t('leaderboard.empty'));
  });

  it.each(LANGUAGES)('/settings show with every setting and both problems (%s)', (_, t) => {
    const msg = renderOverview(
      {
        settings: {
          guildId: '1',
          reminderChannelId: snowflake(2),
          reminderRoleId: snowflake(3),
          reminderTemplate: `${'```'}${HOSTILE_NAME}${RLO}${CONTROLS}${'x'.repeat(990)}`,
          publicLanguage: 'auto',
          timeZone: null,
          thanksTemplate: null,
          reminderEarlyMs: 30 * 60_000,
          reminderRepeat: { everyMs: 240 * 60_000, times: 10 },
          digest: null,
          liveChannelId: null,
          problem: { reason: 'missing-permission:SendMessages,ViewChannel', at: 1_700_000_000_000 },
          updatedAt: 0,
        },
        reminder: { state: 'waiting', dueAt: 1_700_000_000_000 } as never,
        guildLocale: 'ru',
        webhook: {
          guildId: '1',
          channelId: snowflake(4),
          problem: 'channel-deleted',
          lastEventAt: 1_700_000_000_000,
          updatedAt: 0,
        },
      },
      t,
      { title: t('settings.title.show'), color: COLORS.info, intro: 'intro' },
    );
    expectWithinLimits(msg);
    const shown = view(msg);
    expect(shown.title).toBe(t('settings.title.show'));
    expect(shown.color).toBe(COLORS.warning);
    expect(shown.fields.map((f) => f.name)).toEqual([
      t('settings.field.reminders'),
      t('settings.field.role'),
      t('settings.field.nextReminder'),
      t('settings.field.early'),
      t('settings.field.repeat'),
      t('settings.field.digest'),
      t('settings.field.live'),
      t('settings.field.language'),
      t('settings.field.timeZone'),
      t('settings.field.thanks'),
      t('settings.field.webhook'),
      t('settings.field.message'),
      `⚠️ ${t('settings.field.webhook')}`,
      `⚠️ ${t('settings.field.problem')}`,
    ]);
    // The template in one code block it cannot end.
    expect(
      shown.fields.find((f) => f.name === t('settings.field.message'))?.value.match(/```/g),
    ).toHaveLength(2);
  });

  const comment = (change: 'new' | 'edit' | 'delete', body: string | null): DirectoryEvent => ({
    kind: 'comment',
    change,
    userId: snowflake(9),
    at: 1_700_000_000_000,
    vote: { old: 1, new: -1 },
    text: { old: body, new: change === 'delete' ? null : `${body ?? ''} (edited)` },
    reason: change === 'delete' ? 'moderation' : null,
  });

  it.each(LANGUAGES)("the directory's events: each kind of comment and the test delivery (%s)", (_, t) => {
    const hostile = `${HOSTILE_NAME}\n# heading\n${'😀'.repeat(3000)}`;
    for (const change of ['new', 'edit', 'delete'] as const) {
      for (const body of [null, 'short', hostile]) {
        const layout = renderEvent(comment(change, body), t);
        expect(layout).toBeDefined();
        const msg = { layout: layout ?? [] };
        expectWithinLimits(msg);
        expectNoPing(msg, [snowflake(9)]);
        const shown = view(msg);
        expect(shown.title).toBe(t(`webhook.comment.${change}`));
        expect(shown.fields.find((f) => f.name === t('webhook.field.author'))?.value).toBe(
          `<@${snowflake(9)}>`,
        );
        expect(shown.footer).toBe('<t:1700000000:F>');
      }
    }
    const edited = view({ layout: renderEvent(comment('edit', 'before'), t) ?? [] });
    expect(edited.fields.find((f) => f.name === t('webhook.field.before'))?.value).toBe('> before');
    expect(edited.fields.find((f) => f.name === t('webhook.field.after'))?.value).toBe('> before (edited)');
    const test = { layout: renderEvent({ kind: 'test' }, t) ?? [] };
    expectWithinLimits(test);
    expect(view(test).title).toBe(t('webhook.connected.title'));
    expect(renderEvent({ kind: 'bump', userId: snowflake(1), at: 0, bonus: null }, t)).toBeUndefined();
  });

  it.each(LANGUAGES)('the reminder channel confirmation (%s)', (_, t) => {
    const msg = { layout: renderConfirmation({ roleId: snowflake(5), command: '</up:1>' }, t) };
    expectWithinLimits(msg);
    expect(view(msg).title).toBe(t('settings.confirmation.title'));
  });

  it('a reminder: its text in a green container, the role mention kept for allowed_mentions to ping', () => {
    const msg = { layout: reminderLayout(`<@&${snowflake(5)}> **Server** can be raised again: </up:1>`) };
    expectWithinLimits(msg);
    expect(view(msg).color).toBe(COLORS.success);
    expect(view(msg).description).toBe(`<@&${snowflake(5)}> **Server** can be raised again: </up:1>`);
  });
});

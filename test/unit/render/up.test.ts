import { describe, expect, it } from 'vitest';
import { serverUpSchema } from '../../../src/directory/schemas.js';
import type { ServerUpResult } from '../../../src/directory/types.js';
import { COLORS } from '../../../src/render/colors.js';
import { nextUpText, renderUpResult, upOutcome } from '../../../src/render/up.js';
import { directorySample as sample } from '../../support/samples.js';
import { CONTROLS, en, expectNoPing, expectWithinLimits, fieldValue, RLO, ru } from './helpers.js';

describe('up result', () => {
  const successSample = sample('server-up-response.json');
  const cooldownSample = sample('server-up-cooldown-response.json');
  // The success sample's next up is an epoch time: 2022-01-07T21:00:30.690Z.
  const EPOCH_NEXT = 1_641_589_230_690;
  const epochReceived = EPOCH_NEXT - 4 * 3_600_000;
  const durationReceived = 1_700_000_000_000;

  const success = (): ServerUpResult => serverUpSchema(epochReceived).parse(successSample);
  const cooldown = (): ServerUpResult => serverUpSchema(durationReceived).parse(cooldownSample);

  it('success (epoch sample): green, public text as given, bumps, boost, next up', () => {
    const result = success();
    expect(upOutcome(result)).toBe('success');
    const msg = renderUpResult(result, en, epochReceived);
    expectWithinLimits(msg);
    expectNoPing(msg);
    const [embed] = msg.embeds;
    expect(embed?.color).toBe(COLORS.success);
    expect(embed?.title).toBe('⬆️ Server raised');
    expect(embed?.description).toBe(
      '✅ Серверу было успешно добавлено **2 UP**!\n\nℹ️Вы также можете оставить отзыв о сервере!\n' +
        '> https://myservers.me/s/boticord',
    );
    expect(fieldValue(msg, 'Ups')).toBe('2');
    expect(fieldValue(msg, 'Boost')).toBe('Yes');
    const unix = Math.floor(EPOCH_NEXT / 1000);
    expect(fieldValue(msg, 'Next up')).toBe(`<t:${unix}:R> (<t:${unix}:f>)`);
    expect(msg.components).toEqual([]);
  });

  it('cooldown (duration sample): yellow, next up counted from the receive time', () => {
    const result = cooldown();
    expect(upOutcome(result)).toBe('cooldown');
    const msg = renderUpResult(result, en, durationReceived);
    expectWithinLimits(msg);
    const [embed] = msg.embeds;
    expect(embed?.color).toBe(COLORS.cooldown);
    expect(embed?.title).toBe('⏳ Not yet');
    expect(embed?.description).toBe(
      '❌ Сервер пока нельзя поднять! Следующий **UP** будет доступен через **3 ч. 59 мин. 55 сек.**',
    );
    expect(fieldValue(msg, 'Ups')).toBe('63');
    expect(fieldValue(msg, 'Boost')).toBe('No');
    const unix = Math.floor((durationReceived + 14_395_000) / 1000);
    expect(fieldValue(msg, 'Next up')).toBe(`<t:${unix}:R> (<t:${unix}:f>)`);
  });

  it('updated: false has its own look', () => {
    const result = serverUpSchema(durationReceived).parse({
      ...(cooldownSample as Record<string, unknown>),
      updated: false,
    });
    expect(upOutcome(result)).toBe('notUpdated');
    const msg = renderUpResult(result, ru, durationReceived);
    expectWithinLimits(msg);
    expect(msg.embeds[0]?.color).toBe(COLORS.warning);
    expect(msg.embeds[0]?.title).toBe('⚠️ Каталог не обновил сервер');
    expect(fieldValue(msg, 'Буст')).toBe('Нет');
  });

  it('the three looks differ in color and title', () => {
    const results = [success(), cooldown(), { ...cooldown(), updated: false }];
    const embeds = results.map((r) => renderUpResult(r, en, durationReceived).embeds[0]);
    expect(new Set(embeds.map((e) => e?.color)).size).toBe(3);
    expect(new Set(embeds.map((e) => e?.title)).size).toBe(3);
  });

  it('says "now" for a next up in the past and leaves the field out when unknown', () => {
    const past = renderUpResult(success(), en, EPOCH_NEXT + 1);
    expect(fieldValue(past, 'Next up')).toBe('now');
    expect(fieldValue(renderUpResult(success(), ru, EPOCH_NEXT + 1), 'Следующий ап')).toBe('сейчас');
    const none = renderUpResult({ ...success(), nextUpAt: null }, en, 0);
    expect(fieldValue(none, 'Next up')).toBeUndefined();
    expect(nextUpText(null, 0, en)).toBeNull();
  });

  it('keeps a hostile message within limits and mention-free', () => {
    const result: ServerUpResult = {
      ...success(),
      message: `@everyone <@&123> <@585766846268047370> ${RLO}${CONTROLS}:tada:${'😀'.repeat(3000)}`,
    };
    const msg = renderUpResult(result, en, epochReceived);
    expectWithinLimits(msg);
    expectNoPing(msg);
    expect(msg.embeds[0]?.description?.startsWith('@\u200beveryone <\u200b@&123> <\u200b@5857')).toBe(true);
    expect(msg.embeds[0]?.description).toContain('🎉');
  });

  it('leaves out an empty message', () => {
    const msg = renderUpResult({ ...success(), message: '' }, en, epochReceived);
    expect(msg.embeds[0]?.description).toBeUndefined();
    expectWithinLimits(msg);
  });
});

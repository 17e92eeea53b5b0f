import { describe, expect, it } from 'vitest';
import {
  checkReminderTemplate as checkTemplate,
  fillTemplate,
  MAX_TEMPLATE_LENGTH,
} from '../../../src/features/reminders/template.js';
import { checkThanks, MAX_THANKS_LENGTH, thanksLine } from '../../../src/features/up/thanks.js';
import { translator } from '../../../src/i18n/index.js';

const values = {
  roleId: '123456789012345678',
  commandId: '223456789012345678',
  commandName: 'up',
  server: 'My *server* @everyone <@1>',
  time: 1_700_000_000_000,
};

describe('reminder templates', () => {
  it('accepts the four placeholders and fills each', () => {
    const check = checkTemplate('  {role} {server} can go up at {time}: {command}  ');
    expect(check).toEqual({ ok: true, template: '{role} {server} can go up at {time}: {command}' });
    if (!check.ok) return;
    const filled = fillTemplate(check.template, values);
    expect(filled).toMatch(
      /^<@&123456789012345678> My \\\*server\\\* .+ can go up at <t:1700000000:t>: <\/up:223456789012345678>$/,
    );
    // The server's name can neither ping nor show as a mention.
    expect(filled).not.toContain('@everyone');
    expect(filled).not.toContain('<@1>');
  });

  it('refuses an unknown placeholder and names it', () => {
    expect(checkTemplate('{rol} go')).toEqual({
      ok: false,
      reason: 'unknownPlaceholder',
      placeholder: '{rol}',
    });
    expect(checkTemplate('{ROLE}')).toMatchObject({ ok: false, reason: 'unknownPlaceholder' });
  });

  it('leaves braces that are not placeholders alone', () => {
    expect(checkTemplate('{ not one } and {}')).toMatchObject({ ok: true });
  });

  it('refuses more than 1,000 characters, counted as Discord counts them', () => {
    expect(checkTemplate('a'.repeat(MAX_TEMPLATE_LENGTH))).toMatchObject({ ok: true });
    expect(checkTemplate('😀'.repeat(MAX_TEMPLATE_LENGTH))).toMatchObject({ ok: true });
    expect(checkTemplate('a'.repeat(MAX_TEMPLATE_LENGTH + 1))).toEqual({
      ok: false,
      reason: 'tooLong',
      length: MAX_TEMPLATE_LENGTH + 1,
      max: MAX_TEMPLATE_LENGTH,
    });
  });

  it('refuses an empty template', () => {
    expect(checkTemplate('   ')).toEqual({ ok: false, reason: 'empty' });
  });

  it('without a role or a command id: no mention, a plain command name', () => {
    expect(fillTemplate('{role} Time to {command}', { ...values, roleId: null, commandId: null })).toBe(
      'Time to /up',
    );
  });

  it('does not fill a placeholder that a value brought in', () => {
    expect(fillTemplate('{server}', { ...values, server: '{role}' })).toBe('{role}');
  });
});

describe('the thank-you line (features/up/thanks.ts)', () => {
  const en = translator('en-US');
  const ru = translator('ru');

  it('takes its own placeholders and at most 300 characters', () => {
    expect(checkThanks('Thanks {member} for {server}: {ups} ups, {streak} days')).toMatchObject({ ok: true });
    expect(checkThanks('Thanks {member} {role}')).toEqual({
      ok: false,
      reason: 'unknownPlaceholder',
      placeholder: '{role}',
    });
    expect(checkThanks('x'.repeat(MAX_THANKS_LENGTH + 1))).toEqual({
      ok: false,
      reason: 'tooLong',
      length: MAX_THANKS_LENGTH + 1,
      max: MAX_THANKS_LENGTH,
    });
  });

  it('is filled with the member as a mention, the rest escaped, and no mention of its own', () => {
    const values = { userId: '310000000000000001', serverName: '**Bold** @here', ups: 1234, streakDays: 3 };
    expect(thanksLine('{member} {server} {ups} {streak} @everyone <@&1> {member}', values, en)).toBe(
      '<@310000000000000001> \\*\\*Bold\\*\\* @\u200bhere 1,234 3 @\u200beveryone <\u200b@&1> <@310000000000000001>',
    );
    expect(thanksLine('{server}: {ups}', { ...values, serverName: null, ups: null }, ru)).toBe(
      'этот сервер: —',
    );
    expect(thanksLine('{ups}', values, ru)).toBe('1\u00a0234');
  });
});

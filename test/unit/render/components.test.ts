import { ButtonStyle, ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { actionButton, linkButton, rows } from '../../../src/render/components.js';
import { BAD_URLS } from './helpers.js';

describe('components', () => {
  it('linkButton refuses every URL that is not http(s)', () => {
    for (const bad of BAD_URLS) expect(linkButton('x', bad), bad).toBeNull();
    expect(linkButton('x', null)).toBeNull();
    expect(linkButton('Site', 'https://kerdoku.top')).toEqual({
      type: ComponentType.Button,
      style: ButtonStyle.Link,
      label: 'Site',
      url: 'https://kerdoku.top/',
    });
    expect(linkButton('l'.repeat(200), 'https://a.example')?.label).toHaveLength(80);
  });

  it('actionButton refuses a custom_id over 100 characters', () => {
    expect(() => actionButton('x', 'a'.repeat(101))).toThrow(RangeError);
    expect(actionButton('x', 'a'.repeat(100)).custom_id).toHaveLength(100);
  });

  it('rows packs five a row, five rows at most, and drops nulls', () => {
    const many = Array.from({ length: 30 }, (_, i) => actionButton(`b${i}`, `id${i}`));
    const packed = rows([null, ...many, null]);
    expect(packed).toHaveLength(5);
    expect(packed.every((r) => r.components.length === 5)).toBe(true);
    expect(rows([null, null])).toEqual([]);
    expect(rows(many.slice(0, 7)).map((r) => r.components.length)).toEqual([5, 2]);
  });
});

import type { APIEmbed } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { fitEmbed, LIMITS } from '../../../src/render/limits.js';
import { embedTotal } from './helpers.js';

describe('fitEmbed', () => {
  it("knows Discord's limits", () => {
    expect(LIMITS).toEqual({
      title: 256,
      description: 4096,
      fields: 25,
      fieldName: 256,
      fieldValue: 1024,
      footer: 2048,
      author: 256,
      total: 6000,
      buttonsPerRow: 5,
      rows: 5,
      buttonLabel: 80,
      customId: 100,
    });
  });

  it('holds every limit for an oversized embed, trimming the description first', () => {
    const embed: APIEmbed = {
      title: 't'.repeat(400),
      description: 'd'.repeat(5000),
      footer: { text: 'f'.repeat(3000) },
      author: { name: 'a'.repeat(300) },
      fields: Array.from({ length: 40 }, (_, i) => ({ name: `n${i}`.repeat(200), value: 'v'.repeat(2000) })),
    };
    const out = fitEmbed(embed);
    expect(out.title).toHaveLength(256);
    expect(out.footer?.text).toHaveLength(2048);
    expect(out.author?.name).toHaveLength(256);
    expect(out.fields?.length ?? 0).toBeLessThanOrEqual(25);
    for (const f of out.fields ?? []) {
      expect(f.name.length).toBeLessThanOrEqual(256);
      expect(f.value.length).toBeLessThanOrEqual(1024);
    }
    expect(embedTotal(out)).toBeLessThanOrEqual(6000);
  });

  it('trims the description before dropping fields, and drops empty parts', () => {
    const out = fitEmbed({
      title: '',
      description: 'd'.repeat(4096),
      fields: [
        { name: 'a', value: 'v'.repeat(1000) },
        { name: 'b', value: 'v'.repeat(1000) },
        { name: ' ', value: 'x' },
        { name: 'c', value: '  ' },
      ],
    });
    expect(out.title).toBeUndefined();
    expect(out.fields?.map((f) => f.name)).toEqual(['a', 'b']);
    expect(embedTotal(out)).toBe(6000);
    expect(out.description?.endsWith('…')).toBe(true);
    expect(fitEmbed({ description: '' }).description).toBeUndefined();
    expect(fitEmbed({ title: 'x' }).fields).toBeUndefined();
  });

  it('leaves a small embed as it was', () => {
    const embed: APIEmbed = {
      title: 'T',
      description: 'D',
      fields: [{ name: 'n', value: 'v', inline: true }],
    };
    expect(fitEmbed(embed)).toEqual(embed);
  });
});

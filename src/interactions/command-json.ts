/**
 * The pieces of a command's Discord JSON named from the i18n catalogs: a command's or option's
 * name with its Russian name, its description in both languages, a choice. Handler-free, as the
 * definitions that use them (commands/definitions.ts and each concept's `settings-command.ts`):
 * deploying loads no handler.
 */
import { localizations } from '../i18n/index.js';

/**
 * A command's or option's name and its Russian name from the catalogs. The English name stays
 * written where it is used because handlers look options up by it; the en-US catalog holds the
 * same name.
 */
export function named<const Name extends string>(
  name: Name,
  key: string,
): { name: Name; name_localizations: { ru: string } } {
  return { name, name_localizations: { ru: localizations(key).ru } };
}

export function describe(key: string): { description: string; description_localizations: { ru: string } } {
  const texts = localizations(key);
  return { description: texts['en-US'], description_localizations: { ru: texts.ru } };
}

/** A choice's value and its names: English from the en-US catalog, Russian from ru. */
export function choice<const Value extends string>(value: Value, key: string) {
  const texts = localizations(key);
  return { name: texts['en-US'], name_localizations: { ru: texts.ru }, value } as const;
}

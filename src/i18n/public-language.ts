/**
 * The language of what the bot posts publicly in a server (reminders, the /settings
 * confirmation, a public /up answer): the one /settings language chose, or with `auto` the
 * server's own locale (Discord's `guild_locale`). Private answers follow each user's locale.
 */
import { resolveLocale, type SupportedLocale, type Translate, translator } from './index.js';

/** What /settings language keeps: a language, or `auto` for the server's own. */
export type PublicLanguage = 'auto' | SupportedLocale;

export function publicLocale(
  language: PublicLanguage,
  guildLocale: string | null | undefined,
): SupportedLocale {
  return language === 'auto' ? resolveLocale(guildLocale) : language;
}

/**
 * What the bot posts publicly in a server is worded by this: the server's setting (`auto` when it
 * has none, or its settings could not be read) over the server's own locale.
 */
export function publicTranslator(
  settings: { publicLanguage?: PublicLanguage | null } | null | undefined,
  guildLocale: string | null | undefined,
): Translate {
  return translator(publicLocale(settings?.publicLanguage ?? 'auto', guildLocale));
}

/** The setting in words, in the reader's language: "Auto: the server's language (Russian)". */
export function languageText(
  language: PublicLanguage,
  guildLocale: string | null | undefined,
  t: Translate,
): string {
  if (language !== 'auto') return t(`settings.language.${language}`);
  return t('settings.language.auto', { language: t(`settings.language.${resolveLocale(guildLocale)}`) });
}

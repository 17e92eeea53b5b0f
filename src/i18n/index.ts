/**
 * Localization with i18next and one JSON catalog per locale. Replies follow the user's Discord
 * locale (`interaction.locale`): Russian for `ru`, US English for everything else.
 * Plurals use i18next's Intl.PluralRules suffixes (_one, _few, _many, _other).
 */
import { createInstance, type TFunction } from 'i18next';
import enUS from './locales/en-US.json' with { type: 'json' };
import ru from './locales/ru.json' with { type: 'json' };

export const SUPPORTED_LOCALES = ['en-US', 'ru'] as const;
export type SupportedLocale = (typeof SUPPORTED_LOCALES)[number];
export const FALLBACK_LOCALE: SupportedLocale = 'en-US';

export type Translate = TFunction;

const i18n = createInstance();
void i18n.init({
  resources: { 'en-US': { translation: enUS }, ru: { translation: ru } },
  lng: FALLBACK_LOCALE,
  fallbackLng: FALLBACK_LOCALE,
  supportedLngs: [...SUPPORTED_LOCALES],
  // Replies are Discord markdown, not HTML; escaping is done by the renderers.
  interpolation: { escapeValue: false },
  initAsync: false,
  returnNull: false,
});

/** Maps a Discord locale (`ru`, `en-GB`, `de`, ...) to one we have. */
export function resolveLocale(locale: string | null | undefined): SupportedLocale {
  if (locale?.toLowerCase().startsWith('ru')) return 'ru';
  return FALLBACK_LOCALE;
}

export function translator(locale: string | null | undefined): Translate {
  return i18n.getFixedT(resolveLocale(locale));
}

/** All locales' texts for one key, as Discord's `*_localizations` want them (en-US is the default). */
export function localizations(key: string): { 'en-US': string; ru: string } {
  return { 'en-US': i18n.getFixedT('en-US')(key), ru: i18n.getFixedT('ru')(key) };
}

export function catalogKeys(locale: SupportedLocale): string[] {
  const catalog = locale === 'ru' ? ru : enUS;
  const keys: string[] = [];
  const walk = (node: unknown, prefix: string): void => {
    if (typeof node === 'string') keys.push(prefix);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) walk(v, prefix ? `${prefix}.${k}` : k);
    }
  };
  walk(catalog, '');
  return keys;
}

/**
 * What may be said of a PostgreSQL URL, and what never: the configuration checks DATABASE_URL
 * and the logger scrubs its password with these, before anything of the store is loaded.
 */

/** postgres://user@host:port/database: what a message may show of the URL (never a password). */
export function describeUrl(url: string): string | undefined {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed?.protocol !== 'postgres:' && parsed?.protocol !== 'postgresql:') return undefined;
  const user = parsed.username ? `${decoded(parsed.username)}@` : '';
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
}

/**
 * The URL's password in every form a line may carry it: as written (percent-encoded), decoded,
 * and as a `password=` parameter, which pg also reads.
 */
export function passwordsOf(url: string): string[] {
  if (!URL.canParse(url)) return [];
  const parsed = new URL(url);
  const found = [parsed.password, decoded(parsed.password), parsed.searchParams.get('password') ?? ''];
  return [...new Set(found.filter((p) => p !== ''))];
}

/** No server or driver message should carry the password; one that did would not show it. */
export function withoutPassword(text: string, url: string): string {
  return passwordsOf(url).reduce((out, p) => out.replaceAll(p, '***'), text);
}

function decoded(component: string): string {
  try {
    return decodeURIComponent(component);
  } catch {
    return component;
  }
}

/**
 * Text from the directory is untrusted: an ESC or C1 sequence in it can retitle the window, clear
 * the screen or rewrite what was printed before, and a bidi override can make a line read other
 * than it is. Everything the CLI writes goes through escapeControls (src/cli/output.ts), and so
 * does every log line of the bot (src/log/logger.ts): JSON escapes C0 but not DEL, C1 or bidi
 * controls, and logs are read in terminals too.
 *
 * Written here rather than taken from a package: strip-ansi and ansi-regex only match well-formed
 * ANSI sequences and leave a lone ESC, C1 controls and bidi controls through, and removing text
 * would hide that the directory sent something odd. The Unicode properties below name the whole
 * class, so nothing has to be listed by hand.
 */

/**
 * Control characters (C0 but for new line and tab, DEL, C1: \p{Cc}), bidi controls (U+061C,
 * U+200E/U+200F, U+202A–U+202E, U+2066–U+2069: \p{Bidi_Control}) and the line and paragraph
 * separators U+2028/U+2029, which some terminals and editors break lines at.
 */
const UNSAFE = /[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/gu;

/**
 * Replaces each unsafe code point with its JSON escape, `\u001b` for ESC: visible and readable in
 * text, and inside a JSON string the same value, so JSON output parses to the original text.
 * New lines and tabs pass. Idempotent: the escape itself is plain ASCII.
 */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (char) =>
    char === '\n' || char === '\t' ? char : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

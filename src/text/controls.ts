/**
 * Text from the directory is untrusted: an ESC or C1 sequence in it can retitle the window, clear
 * the screen or rewrite what was printed before, and a bidi control can make a line read other
 * than it is. The one definition of what is unsafe lives here, for both ways text leaves the
 * process: everything the CLI writes goes through escapeControls (src/cli/output.ts), and so does
 * every log line of the bot (src/log/logger.ts): JSON escapes C0 but not DEL, C1 or bidi
 * controls, and logs are read in terminals too; everything the bot sends to Discord goes through
 * removeControls (stripControl in src/render/text.ts).
 *
 * Written here rather than taken from a package: strip-ansi and ansi-regex only match well-formed
 * ANSI sequences and leave a lone ESC, C1 controls and bidi controls through, and removing text
 * would hide from a terminal that the directory sent something odd. The Unicode properties below
 * name the whole class, so nothing has to be listed by hand.
 */

/**
 * Control characters (C0 but for new line and tab, DEL, C1: \p{Cc}), bidi controls (U+061C,
 * U+200E/U+200F, U+202A–U+202E, U+2066–U+2069: \p{Bidi_Control}), the line and paragraph
 * separators U+2028/U+2029, which some terminals and editors break lines at, the byte order
 * mark U+FEFF, invisible in the middle of text, and a lone surrogate (half of a pair: \p{Cs}
 * matches only those under the `u` flag), which is no character at all and which Discord shows
 * as U+FFFD at best. New line and tab are allowed.
 */
const UNSAFE = /[^\P{Cc}\n\t]|[\p{Bidi_Control}\p{Zl}\p{Zp}\p{Cs}\ufeff]/gu;

/**
 * Replaces each unsafe code point with its JSON escape, `\u001b` for ESC: visible and readable in
 * text, and inside a JSON string the same value, so JSON output parses to the original text.
 * New lines and tabs pass. Idempotent: the escape itself is plain ASCII. For a terminal.
 */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Removes each unsafe code point; new lines and tabs pass. For Discord, where an escape would read as noise. */
export function removeControls(text: string): string {
  return text.replace(UNSAFE, '');
}

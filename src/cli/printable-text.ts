/**
 * Strings the CLI prints from a store (model names, key names, tenants) were chosen, in part, by callers of
 * the gateway. Printed raw, an ESC sequence clears the screen or forges an OSC-8 link, a newline or carriage
 * return forges a row, and a bidi override reorders what the reader sees. These helpers make such text inert.
 */

/** C0 controls (newline, ESC, BEL...), DEL, C1 controls, the Unicode line separators and bidi controls. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The text with every control character written as an escape (`\x1b`, `\u202e`), so a terminal shows it and does not obey it. */
export function printable(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => {
    const code = character.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A cell a spreadsheet would read as a formula (OWASP's CSV injection rule: `= + - @`, tab, carriage return). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One RFC 4180 cell that no spreadsheet runs: control characters escaped, a formula-looking start neutralised
 * with a leading `'` (OWASP), and quoted when it holds a comma or a quote.
 */
export function csvCell(text: string): string {
  const inert = FORMULA_START.test(text) ? `'${printable(text)}` : printable(text);
  return /[",']/.test(inert) ? `"${inert.replace(/"/g, '""')}"` : inert;
}

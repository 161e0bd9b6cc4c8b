// The rule for the call ids and tool names core accepts from a model. Ids are used as keys (of
// decisions, maps, log lines, file names in interpreters) and shown to people, so they are kept
// short and printable: 1 to 256 characters (UTF-16 code units), no C0 control (U+0000–U+001F),
// DEL (U+007F) or C1 control (U+0080–U+009F). Any other string is fine, `__proto__` included:
// everything keyed by id in core uses own properties or Maps.

/** The longest call id or tool name core accepts. */
export const MAX_ID_LENGTH = 256;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `value` is not an acceptable call id or tool name, or null when it is. */
export function idProblem(value: string): string | null {
  if (value.length === 0) return 'is empty';
  if (value.length > MAX_ID_LENGTH) return `is ${value.length} characters long; at most ${MAX_ID_LENGTH} are allowed`;
  const control = CONTROL.exec(value);
  if (control !== null) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return `contains the control character U+${code} at index ${control.index} (got ${preview(value)}); control characters are not allowed`;
  }
  return null;
}

/** The value as JSON, cut to a readable length (an id can be arbitrarily long garbage). */
export function preview(value: string): string {
  return value.length <= 40 ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, 40))}…`;
}

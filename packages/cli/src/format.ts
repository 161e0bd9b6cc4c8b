// Small formatting helpers shared by the commands: compact JSON previews, durations, plurals.

import { safeText } from './safe-text.js';

/** Compact JSON of `value`, cut to `max` characters with an ellipsis; safe to print (see safeText). */
export function preview(value: unknown, max = 120): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return safeText(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

/** `850 ms`, `1.2 s`. */
export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** `1 tool call`, `3 tool calls`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Every line of `text` indented by `indent`. */
export function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((line) => (line.length > 0 ? by + line : line))
    .join('\n');
}

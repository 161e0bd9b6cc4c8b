// A tagged template for HTML that escapes every interpolated value unless it is already `Html`.
// Model text, tool inputs and outputs, ids and reasons are untrusted: they only ever reach a page
// through this escape.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Markup that is safe to insert as is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** `text` with &, <, >, " and ' escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** html`<p>${untrusted}</p>`: interpolations are escaped; arrays are joined; null, undefined and booleans vanish. */
export function html(strings: TemplateStringsArray, ...values: readonly Part[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Trusted markup (generated here, never from a request or a turn). */
export function raw(markup: string): Html {
  return new Html(markup);
}

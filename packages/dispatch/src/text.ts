// Texts the dispatcher writes: safe descriptions of thrown values and names.

/** A short, safe description of a thrown value (never throws, at most 2000 characters). */
export function errorMessage(error: unknown): string {
  let text: string;
  try {
    if (error instanceof Error) text = String(error.message);
    else if (typeof error === 'string') text = error;
    else text = JSON.stringify(error) ?? String(error);
  } catch {
    text = 'an unreadable error';
  }
  if (text === '') text = 'no message';
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

/** Quotes a name for a message, cut to 80 characters so a hostile name cannot flood the text. */
export function quote(name: string): string {
  return `'${name.length > 80 ? `${name.slice(0, 80)}…` : name}'`;
}

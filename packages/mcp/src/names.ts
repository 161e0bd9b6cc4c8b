// Tool names as providers accept them (1 to 64 letters, digits, '_' or '-'), prefixed per server:
// `<server>__<tool>`. A name that had to change (bad characters, too long) or that would collide
// with another one (exactly, or ignoring case, as permission patterns compare) gets a short hash
// of the original name, so every name is unique and stable from one connection to the next.

import { createHash } from 'node:crypto';

export const SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;
const MAX = 64;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Model-facing names for one server's tools, in the order given; `taken` holds lower-cased names already used. */
export function toolNames(server: string, names: readonly string[], taken: Set<string> = new Set()): string[] {
  const prefix = `${server}__`;
  return names.map((original) => {
    const clean = original.replace(/[^a-zA-Z0-9_-]/g, '_');
    let name = `${prefix}${clean}`;
    if (clean !== original || name.length > MAX || clean === '' || taken.has(name.toLowerCase())) {
      const suffix = `_${shortHash(original)}`;
      name = `${prefix}${clean.slice(0, MAX - prefix.length - suffix.length)}${suffix}`;
    }
    for (let n = 2; taken.has(name.toLowerCase()); n++) {
      const suffix = `_${shortHash(`${original}#${n}`)}`;
      name = `${prefix}${clean.slice(0, MAX - prefix.length - suffix.length)}${suffix}`;
    }
    taken.add(name.toLowerCase());
    return name;
  });
}

// Call identity: every call of a turn gets an id no other call of the turn has, whatever ids the
// model sent (docs/turn-contract.md, "Call identity"). Model servers do not keep ids unique: one
// constant id for every call, ids numbered from 0 in each reply, ids reused across turns, or none.
//
// The rule, exact and with a state of fixed size (a long turn's state does not grow with it):
// - `count` is the number of calls the turn has had; a call's position is `count + 1`.
// - A model id is kept when it is not empty, does not end like a derived id (`~<digits>`), is not
//   an id kept earlier in the same reply, and is not in `filter`, a Bloom filter of every id kept in
//   earlier rounds (768 bits, two hashes: 128 characters in a state). A Bloom filter never misses an
//   id it holds, so a repeated id is always caught; now and then (about 1.5% of new ids by the
//   turn's 50th call, 16% by its 200th) it takes a new id for a repeat, and that call gets a
//   derived id it did not need: harmless, since every id stays unique and the model's id is kept
//   beside it.
// - Any other call gets `<id>~<position>` (`call~<position>` without an id): unique, since no two
//   calls share a position and no kept id ends that way.

import { MAX_ID_LENGTH } from './ids.js';
import type { CallIds, ToolCall } from './types.js';

const BITS = 768;
const BYTES = BITS / 8;
/** The filter's length as base64 text: 128 characters, 6 bits each, no padding. */
const CHARS = Math.ceil(BYTES / 3) * 4;
const NO_BITS = 'A'.repeat(CHARS);
const DERIVED = /~\d+$/;
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Each base64 character's value by its code (0 for any other, `=` among them). */
const B64_VALUES = new Uint8Array(128);
for (let i = 0; i < B64.length; i++) B64_VALUES[B64.charCodeAt(i)] = i;

/** The call ids of a turn with no calls yet. */
export const NO_CALL_IDS: CallIds = Object.freeze({ count: 0, filter: '' });

/** The calls of a reply with their turn ids, and the turn's call ids after them. */
export function identifyCalls(ids: CallIds, calls: readonly ToolCall[]): { calls: readonly ToolCall[]; ids: CallIds } {
  if (calls.length === 0) return { calls, ids };
  // Ids of earlier rounds are looked up in the filter as it was; the reply's own ids in an exact
  // set, so a large reply does not fill the filter against itself.
  const earlier = ids.filter;
  let filter = earlier;
  const reply = new Set<string>();
  let changed = false;
  const out = calls.map((call, i) => {
    const position = ids.count + i + 1;
    const own = call.id;
    const keep = own !== '' && !DERIVED.test(own) && !reply.has(own) && !has(earlier, own);
    if (keep) {
      reply.add(own);
      filter = add(filter, own);
    }
    if (keep && call.originalId === undefined) return call;
    changed = true;
    const { originalId: _set_by_core, ...rest } = call;
    if (keep) return rest;
    const suffix = `~${position}`;
    const id = `${own === '' ? 'call' : own.slice(0, MAX_ID_LENGTH - suffix.length)}${suffix}`;
    return own === '' ? { ...rest, id } : { ...rest, id, originalId: own };
  });
  return { calls: changed ? out : calls, ids: { count: ids.count + calls.length, filter } };
}

/** Why `filter` is not a call-id filter (empty, or the base64 text of 96 bytes), or null. */
export function filterProblem(filter: string): string | null {
  if (filter === '') return null;
  if (filter.length !== CHARS || !/^[A-Za-z0-9+/]+=*$/.test(filter)) return `must be empty or the base64 text of ${BYTES} bytes`;
  return null;
}

/** Position `k` (0 or 1) of `id` in the filter: FNV-1a with two multipliers, enough spread for a filter that only ever errs towards renaming. */
function position(id: string, k: 0 | 1): number {
  let h = 0x811c9dc5;
  const prime = k === 0 ? 0x01000193 : 0x5bd1e995;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), prime) >>> 0;
  return h % BITS;
}

// The filter is the base64 text of its 96 bytes, read and written in place: bit `p` is bit `p & 7`
// (1 << (p & 7)) of byte `p >> 3`, which base64 puts at bit `8 * (p >> 3) + 7 - (p & 7)` of its
// stream of 6-bit characters, most significant first. So a test reads one character, and adding an
// id replaces at most two.

/** The index of the character that holds bit `p`, times 8, plus the bit's place in it (0–5 from the top). */
function place(p: number): number {
  const s = (p & ~7) + 7 - (p & 7);
  return (((s / 6) | 0) << 3) | (s % 6);
}

function isSet(filter: string, p: number): boolean {
  const at = place(p);
  return ((B64_VALUES[filter.charCodeAt(at >> 3) & 127] as number) & (32 >> (at & 7))) !== 0;
}

function has(filter: string, id: string): boolean {
  return filter !== '' && isSet(filter, position(id, 0)) && isSet(filter, position(id, 1));
}

/** `filter` with `id`'s two bits set. A filter ending in `=` (which reads as no bits) is written with `A`s there, as the empty filter. */
function add(filter: string, id: string): string {
  const base = filter === '' ? NO_BITS : filter.endsWith('=') ? filter.replace(/=+$/, (pad) => 'A'.repeat(pad.length)) : filter;
  return withBit(withBit(base, position(id, 0)), position(id, 1));
}

function withBit(filter: string, p: number): string {
  const at = place(p);
  const i = at >> 3;
  const value = B64_VALUES[filter.charCodeAt(i) & 127] as number;
  const set = value | (32 >> (at & 7));
  return set === value ? filter : filter.slice(0, i) + B64[set] + filter.slice(i + 1);
}

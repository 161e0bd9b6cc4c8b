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
const DERIVED = /~\d+$/;
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_CODES = Uint8Array.from(B64, (c) => c.charCodeAt(0));
const PAD = '='.charCodeAt(0);
/** Each base64 character's value by its code (0 for any other), read in place of a search of B64 per character. */
const B64_VALUES = new Uint8Array(128);
for (let i = 0; i < B64.length; i++) B64_VALUES[B64.charCodeAt(i)] = i;
const valueAt = (text: string, i: number): number => B64_VALUES[text.charCodeAt(i) & 127] as number;

/** The call ids of a turn with no calls yet. */
export const NO_CALL_IDS: CallIds = Object.freeze({ count: 0, filter: '' });

/** The calls of a reply with their turn ids, and the turn's call ids after them. */
export function identifyCalls(ids: CallIds, calls: readonly ToolCall[]): { calls: readonly ToolCall[]; ids: CallIds } {
  if (calls.length === 0) return { calls, ids };
  // Ids of earlier rounds are looked up in the filter as it was; the reply's own ids in an exact
  // set, so a large reply does not fill the filter against itself.
  const earlier = decode(ids.filter);
  const bits = earlier.slice();
  const reply = new Set<string>();
  let changed = false;
  const out = calls.map((call, i) => {
    const position = ids.count + i + 1;
    const own = call.id;
    const keep = own !== '' && !DERIVED.test(own) && !reply.has(own) && !has(earlier, own);
    if (keep) {
      reply.add(own);
      add(bits, own);
    }
    if (keep && call.originalId === undefined) return call;
    changed = true;
    const { originalId: _set_by_core, ...rest } = call;
    if (keep) return rest;
    const suffix = `~${position}`;
    const id = `${own === '' ? 'call' : own.slice(0, MAX_ID_LENGTH - suffix.length)}${suffix}`;
    return own === '' ? { ...rest, id } : { ...rest, id, originalId: own };
  });
  const filter = reply.size === 0 ? ids.filter : encode(bits);
  return { calls: changed ? out : calls, ids: { count: ids.count + calls.length, filter } };
}

/** Why `filter` is not a call-id filter (empty, or the base64 of 128 bytes), or null. */
export function filterProblem(filter: string): string | null {
  if (filter === '') return null;
  if (filter.length !== Math.ceil(BYTES / 3) * 4 || !/^[A-Za-z0-9+/]+=*$/.test(filter))
    return `must be empty or the base64 text of ${BYTES} bytes`;
  return null;
}

/** Position `k` (0 or 1) of `id` in the filter: FNV-1a with two multipliers, enough spread for a filter that only ever errs towards renaming. */
function position(id: string, k: 0 | 1): number {
  let h = 0x811c9dc5;
  const prime = k === 0 ? 0x01000193 : 0x5bd1e995;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), prime) >>> 0;
  return h % BITS;
}

const isSet = (bits: Uint8Array, p: number): boolean => ((bits[p >> 3] as number) & (1 << (p & 7))) !== 0;

function has(bits: Uint8Array, id: string): boolean {
  return isSet(bits, position(id, 0)) && isSet(bits, position(id, 1));
}

function add(bits: Uint8Array, id: string): void {
  const a = position(id, 0);
  const b = position(id, 1);
  bits[a >> 3] = (bits[a >> 3] as number) | (1 << (a & 7));
  bits[b >> 3] = (bits[b >> 3] as number) | (1 << (b & 7));
}

/** The filter's bits (none set for the empty filter). */
function decode(text: string): Uint8Array {
  const bits = new Uint8Array(BYTES);
  if (text === '') return bits;
  let j = 0;
  for (let i = 0; i < text.length && j < BYTES; i += 4) {
    const n = (valueAt(text, i) << 18) | (valueAt(text, i + 1) << 12) | (valueAt(text, i + 2) << 6) | valueAt(text, i + 3);
    if (j < BYTES) bits[j++] = (n >> 16) & 255;
    if (j < BYTES) bits[j++] = (n >> 8) & 255;
    if (j < BYTES) bits[j++] = n & 255;
  }
  return bits;
}

function encode(bits: Uint8Array): string {
  // One string from one array of character codes (no string built up piece by piece).
  const codes = new Uint8Array(Math.ceil(BYTES / 3) * 4);
  let j = 0;
  for (let i = 0; i < bits.length; i += 3) {
    const n = ((bits[i] as number) << 16) | ((bits[i + 1] ?? 0) << 8) | (bits[i + 2] ?? 0);
    codes[j++] = B64_CODES[(n >> 18) & 63] as number;
    codes[j++] = B64_CODES[(n >> 12) & 63] as number;
    codes[j++] = i + 1 < bits.length ? (B64_CODES[(n >> 6) & 63] as number) : PAD;
    codes[j++] = i + 2 < bits.length ? (B64_CODES[n & 63] as number) : PAD;
  }
  // `apply` takes the typed array as it is (a spread would copy it through an iterator first).
  return String.fromCharCode.apply(null, codes as unknown as number[]);
}

// Fingerprints, as TLC keeps them: the explorations store a 64-bit hash of each node instead of
// its text, in an open-addressing table of 32-bit pairs (16 bytes a slot, at most half full). Two
// different nodes with one fingerprint would make the second look visited and go unexplored: the
// chance that this happens at all in an exploration of n nodes is about n² / 2⁶⁵ (docs/model-checking.md,
// "Fingerprints"). `exploreTurn` fingerprints a state by its structure (`ValueFingerprint`, with the
// same equality as its JSON text, so the counts are the ones the texts gave); `checkAgent`,
// `exploreAgents` and the store's model check use `Fingerprint.text`, the SHA-1 digest of a JSON
// text (native, and faster here than hashing the text in JavaScript) cut to its first 64 bits.

import { hash } from 'node:crypto';

/** Called on the value in a `for in` loop, where V8 optimizes it (and `Object.hasOwn` not). */
const ownProperty = Object.prototype.hasOwnProperty;

/** Base64 digit values by character code (SHA-1 digests come as base64 text). */
const BASE64 = new Uint8Array(128);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  BASE64[c.charCodeAt(0)] = i;

/** A 64-bit fingerprint as two unsigned 32-bit halves; the methods set `hi` and `lo` (no allocation per call). */
export class Fingerprint {
  hi = 0;
  lo = 0;

  /** The fingerprint of a text: the first 64 bits of its SHA-1 digest. */
  text(text: string): this {
    const d = hash('sha1', text, 'base64');
    const c = (i: number): number => BASE64[d.charCodeAt(i)]!;
    this.hi = ((c(0) << 26) | (c(1) << 20) | (c(2) << 14) | (c(3) << 8) | (c(4) << 2) | (c(5) >>> 4)) >>> 0;
    this.lo = (((c(5) & 15) << 28) | (c(6) << 22) | (c(7) << 16) | (c(8) << 10) | (c(9) << 4) | (c(10) >>> 2)) >>> 0;
    return this;
  }

  /**
   * The fingerprint of a pair of fingerprints (a node: its state's and its monitor's), mixed so
   * that every bit of both halves reaches every bit of the result (murmur3's finalizer on each
   * half, crossed).
   */
  pair(aHi: number, aLo: number, bHi: number, bLo: number): this {
    let h = mix(aHi ^ Math.imul(bLo, 0x9e3779b1));
    let l = mix(aLo ^ Math.imul(bHi, 0x85ebca77));
    h = mix(h ^ Math.imul(l, 0xc2b2ae3d) ^ bHi);
    l = mix(l ^ Math.imul(h, 0x27d4eb2f) ^ bLo);
    this.hi = h >>> 0;
    this.lo = l >>> 0;
    return this;
  }
}

function mix(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * A set of 64-bit fingerprints: open addressing with linear probing over an Int32Array of
 * (hi, lo) pairs, doubled when half full. The pair (0, 0) marks an empty slot, so a fingerprint
 * (0, 0) is stored as (0, 1).
 */
export class FingerprintSet {
  #slots: Int32Array;
  #mask: number;
  #size = 0;

  constructor(capacity = 1 << 16) {
    let n = 1 << 4;
    while (n < capacity) n <<= 1;
    this.#slots = new Int32Array(n * 2);
    this.#mask = n - 1;
  }

  /** Fingerprints stored. */
  get size(): number {
    return this.#size;
  }

  /** Bytes the table holds. */
  get bytes(): number {
    return this.#slots.byteLength;
  }

  /** Adds the fingerprint; true when it was not there. */
  add(hi: number, lo: number): boolean {
    const h = hi | 0;
    const l = (hi | lo) === 0 ? 1 : lo | 0;
    const slots = this.#slots;
    const mask = this.#mask;
    let i = (l ^ Math.imul(h, 0x27d4eb2f)) & mask;
    for (;;) {
      const at = i << 1;
      const sh = slots[at]!;
      const sl = slots[at + 1]!;
      if (sh === 0 && sl === 0) {
        slots[at] = h;
        slots[at + 1] = l;
        this.#size += 1;
        if (this.#size * 2 > mask) this.#grow();
        return true;
      }
      if (sh === h && sl === l) return false;
      i = (i + 1) & mask;
    }
  }

  /** True when the fingerprint is in the set. */
  has(hi: number, lo: number): boolean {
    const h = hi | 0;
    const l = (hi | lo) === 0 ? 1 : lo | 0;
    const slots = this.#slots;
    const mask = this.#mask;
    let i = (l ^ Math.imul(h, 0x27d4eb2f)) & mask;
    for (;;) {
      const at = i << 1;
      const sh = slots[at]!;
      const sl = slots[at + 1]!;
      if (sh === 0 && sl === 0) return false;
      if (sh === h && sl === l) return true;
      i = (i + 1) & mask;
    }
  }

  #grow(): void {
    const old = this.#slots;
    const n = (this.#mask + 1) * 2;
    this.#slots = new Int32Array(n * 2);
    this.#mask = n - 1;
    this.#size = 0;
    for (let at = 0; at < old.length; at += 2) {
      const h = old[at]!;
      const l = old[at + 1]!;
      if (h !== 0 || l !== 0) this.add(h, l);
    }
  }
}

/**
 * True for the nodes whose edges get the purity re-runs when they run on one edge in `sample`:
 * node `index` of level `depth`, chosen by a hash of the two, so that a run on worker threads
 * re-runs the same edges as a run on one thread. A whole node's edges are picked, not single
 * edges, so that the deep-frozen copy of its state, made once, serves all of them. `sample` 1:
 * every edge.
 */
export function sampled(index: number, depth: number, sample: number): boolean {
  if (sample <= 1) return true;
  return (mix(mix(index) ^ Math.imul(depth + 1, 0x9e3779b1)) >>> 0) % sample === 0;
}

/**
 * True for the distinct states whose parse check runs when it runs on one state in `sample`: by
 * the high half of the state's fingerprint (the low half picks a state's worker, so the sample
 * is spread over the workers). `sample` 1: every state.
 */
export function parseSampled(stateHi: number, sample: number): boolean {
  return sample <= 1 || (stateHi >>> 0) % sample === 0;
}

/**
 * 64-bit fingerprints of plain JSON values made from their structure instead of their text: two
 * values get one fingerprint exactly when `JSON.stringify` gives them one text (the same keys in
 * the same order, `undefined` and functions left out as JSON leaves them, a non-finite number as
 * `null`), up to a 64-bit collision. Each lane is a murmur3-style running hash with its own seed
 * and multipliers, so the two halves are independent.
 *
 * With `reuse`, the fingerprint of each field of the last object given is remembered with the
 * field's value, and a field whose value is the same object in the next one is not hashed again:
 * core's `step` copies what it changes and shares the rest (the limits, the usage, the batch...),
 * and an exploration hashes the successors of one state one after the other. An object must then
 * never change after it was fingerprinted, which holds for core's `step` (invariant 2 checks it);
 * a reducer under test that might mutate gets no reuse.
 *
 * Measured (step and fingerprint of 87,183 successor states, CPU time, best of 7, load average
 * about 15): JSON text and SHA-1 4.5 µs a state over `step`'s 0.7; this, hashing whole, 2.4; with
 * the fields reused, 1.2. A WeakMap from every object to its fingerprint cost more than it saved
 * (1.8 µs with the fields reused).
 */
export class ValueFingerprint {
  hi = 0;
  lo = 0;
  /** With `reuse`: the last values seen at each path from the top, and their fingerprints. */
  readonly #reused: Reused | undefined;
  /** Strings already hashed (keys and the alphabet's few values), bounded. */
  readonly #strings = new Map<string, number>();
  #stringHashes = new Int32Array(2 * 1024);

  constructor(options: { readonly reuse: boolean }) {
    this.#reused = options.reuse ? new Reused() : undefined;
  }

  /** Sets `hi` and `lo` to the fingerprint of `value`. */
  value(value: unknown): this {
    if (this.#reused !== undefined && value !== null && typeof value === 'object') this.#object(value, this.#reused, 0);
    else this.#value(value);
    return this;
  }

  #value(value: unknown): void {
    switch (typeof value) {
      case 'string':
        this.#string(value);
        return;
      case 'number':
        if ((value | 0) === value) this.#leaf(0x1234567 ^ value, Math.imul(value ^ 0x2468ace, 0x9e3779b1) ^ 0x13579bd);
        else if (!Number.isFinite(value)) this.#leaf(0x6e756c6c, 0x4e554c4c);
        else {
          this.#string(String(value));
          this.#leaf(this.hi ^ 0x0f0f0f0f, this.lo ^ 0x35353535);
        }
        return;
      case 'boolean':
        this.#leaf(value ? 0x74727565 : 0x66616c73, value ? 0x54525545 : 0x46414c53);
        return;
      case 'object':
        if (value === null) this.#leaf(0x6e756c6c, 0x4e554c4c);
        else this.#object(value, undefined, 0);
        return;
      default:
        // undefined, a function or a symbol where JSON would write null (in an array) or nothing.
        this.#leaf(0x6e756c6c, 0x4e554c4c);
    }
  }

  #leaf(hi: number, lo: number): void {
    this.hi = mix(hi) >>> 0;
    this.lo = mix(lo ^ 0x5bd1e995) >>> 0;
  }

  #string(text: string): void {
    const known = this.#strings.get(text);
    if (known !== undefined) {
      this.hi = this.#stringHashes[known]! >>> 0;
      this.lo = this.#stringHashes[known + 1]! >>> 0;
      return;
    }
    let h = 0x73747269 ^ text.length;
    let l = 0x53545249 ^ Math.imul(text.length, 0x85ebca77);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h = Math.imul(h ^ c, 0x01000193);
      l = Math.imul((l << 5) | (l >>> 27), 0xcc9e2d51) ^ c;
    }
    this.hi = mix(h) >>> 0;
    this.lo = mix(l ^ h) >>> 0;
    if (text.length <= 64) {
      if (this.#strings.size * 2 >= this.#stringHashes.length) {
        if (this.#strings.size >= 65_536) this.#strings.clear();
        else {
          const grown = new Int32Array(this.#stringHashes.length * 2);
          grown.set(this.#stringHashes);
          this.#stringHashes = grown;
        }
      }
      const at = this.#strings.size * 2;
      this.#stringHashes[at] = this.hi;
      this.#stringHashes[at + 1] = this.lo;
      this.#strings.set(text, at);
    }
  }

  /** An object or array; with `reused`, the values last seen at its path, whose fingerprints are reused by position. */
  #object(value: object, reused: Reused | undefined, depth: number): void {
    let h: number;
    let l: number;
    if (Array.isArray(value)) {
      h = 0x61727261 ^ value.length;
      l = 0x41525241;
      for (let i = 0; i < value.length; i++) {
        if (reused === undefined) this.#value(value[i]);
        else this.#item(value[i], reused, i, depth);
        h = Math.imul(h ^ this.hi, 0xcc9e2d51);
        h = ((h << 13) | (h >>> 19)) + 0xe6546b64;
        l = Math.imul(l ^ this.lo, 0x1b873593);
        l = ((l << 15) | (l >>> 17)) + 0x561ccd1b;
      }
    } else {
      const proto = Object.getPrototypeOf(value) as object | null;
      if (proto !== Object.prototype && proto !== null) {
        // Not plain data: its JSON text stands for it, as it did for the text fingerprints.
        this.#string(JSON.stringify(value) ?? 'undefined');
        this.#leaf(this.hi ^ 0x4a534f4e, this.lo ^ 0x6a736f6e);
        return;
      }
      h = 0x6f626a65;
      l = 0x4f424a45;
      const record = value as Record<string, unknown>;
      let position = 0;
      for (const key in record) {
        if (!ownProperty.call(record, key)) continue;
        const item = record[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        if (reused === undefined || position >= MAX_REUSED_FIELDS) this.#string(key);
        else if (reused.keys[position] === key) {
          this.hi = reused.keyHashes[2 * position]! >>> 0;
          this.lo = reused.keyHashes[2 * position + 1]! >>> 0;
        } else {
          this.#string(key);
          reused.keys[position] = key;
          reused.keyHashes[2 * position] = this.hi;
          reused.keyHashes[2 * position + 1] = this.lo;
        }
        h = Math.imul(h ^ this.hi, 0xcc9e2d51);
        l = Math.imul(l ^ this.lo, 0x1b873593);
        if (reused === undefined) this.#value(item);
        else this.#item(item, reused, position, depth);
        position += 1;
        h = Math.imul(h ^ this.hi, 0x85ebca6b);
        h = ((h << 13) | (h >>> 19)) + 0xe6546b64;
        l = Math.imul(l ^ this.lo, 0xc2b2ae35);
        l = ((l << 15) | (l >>> 17)) + 0x561ccd1b;
      }
    }
    this.hi = mix(h ^ Math.imul(l, 0x27d4eb2f)) >>> 0;
    this.lo = mix(l ^ Math.imul(h, 0x165667b1)) >>> 0;
  }

  /**
   * Field or element `position` of an object at the path of `reused`: an object that is the one
   * last seen there gets its fingerprint back; another is walked (reusing one level deeper, down
   * to `REUSED_DEPTH`) and remembered.
   */
  #item(item: unknown, reused: Reused, position: number, depth: number): void {
    if (position >= MAX_REUSED_FIELDS) {
      this.#value(item);
      return;
    }
    const hashes = reused.hashes;
    // The value last seen here (a number, a status, an id or a shared object mostly is): its
    // fingerprint, which a primitive's value alone decides and an object never changes after.
    if (reused.items[position] === item) {
      this.hi = hashes[2 * position]! >>> 0;
      this.lo = hashes[2 * position + 1]! >>> 0;
      return;
    }
    if (item === null || typeof item !== 'object') this.#value(item);
    else {
      let below: Reused | undefined;
      if (depth + 1 < REUSED_DEPTH) {
        below = reused.below[position];
        if (below === undefined) {
          below = new Reused();
          reused.below[position] = below;
        }
      }
      this.#object(item, below, depth + 1);
    }
    reused.items[position] = item;
    hashes[2 * position] = this.hi;
    hashes[2 * position + 1] = this.lo;
  }
}

/** No value seen yet. */
const NOTHING: unique symbol = Symbol('nothing');

/** The values (and keys) last seen at one path (a field of a field... of the values given) and their fingerprints, by position. */
class Reused {
  /** NOTHING where no value was seen yet (`undefined` is a value an array can hold). */
  readonly items: unknown[] = new Array<unknown>(MAX_REUSED_FIELDS).fill(NOTHING);
  readonly hashes = new Int32Array(2 * MAX_REUSED_FIELDS);
  readonly below: Array<Reused | undefined> = [];
  /** An object's keys by position, and their fingerprints (the key hashed last time, if the same). */
  readonly keys: string[] = [];
  readonly keyHashes = new Int32Array(2 * MAX_REUSED_FIELDS);
}

/** How deep below the value given the fingerprints of shared objects are reused (the value's fields are depth 1). */
const REUSED_DEPTH = 4;

/** Fields or elements of an object whose values `ValueFingerprint` reuses (a turn state has 18 fields). */
const MAX_REUSED_FIELDS = 32;

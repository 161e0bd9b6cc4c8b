// How a state and its limits are stored: only what differs from a base, a fresh turn's values,
// marked `"~": 1`. A state is rewritten at every checkpoint, and most of it (zero counters, empty
// lists, nulls, default limits) is what every turn starts with; leaving that out shortens each
// checkpoint's write. The bases are literals, not core's current defaults, so a row stays readable
// whatever a later core starts a turn with. A row without the mark is read as it is (rows written
// before this encoding, or a value the encoding cannot express).

import { sameJson } from '@turnkit/core/internal';
import type { JsonValue } from '@turnkit/core';

/** The mark of a lean row; its value is the version of the base it was written against (`STATE_BASES`). */
export const LEAN_MARK = '~';

/** A fresh state (status `ready`, state version 3) without its id and limits; `batch` as a batch with nothing in it. */
const STATE_BASE_1: Readonly<Record<string, JsonValue>> = deepFreeze({
  version: 3,
  status: 'ready',
  round: 0,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, modelCalls: 0, toolCalls: 0 },
  forced: null,
  batch: { calls: [], notExecuted: [], held: [], parked: [], decisions: {} },
  lastBatch: null,
  repeats: 0,
  repairs: 0,
  recoveries: 0,
  candidate: null,
  nextModel: null,
  lastRequest: null,
  outcome: null,
});

/** A fresh state of version 4: version 3's with `callIds` (a turn with no calls yet). */
const STATE_BASE_2: Readonly<Record<string, JsonValue>> = deepFreeze({
  ...STATE_BASE_1,
  version: 4,
  callIds: { count: 0, filter: '' },
});

/** A fresh state of version 5: version 4's with `agents` (a turn of one agent). */
const STATE_BASE_3: Readonly<Record<string, JsonValue>> = deepFreeze({
  ...STATE_BASE_2,
  version: 5,
  agents: null,
});

/**
 * The state bases by lean version (index = version - 1): a row is read against the base it was
 * written with. Version 4 is version 3's base with the row's keys short (`STATE_KEYS`).
 */
export const STATE_BASES: readonly Readonly<Record<string, JsonValue>>[] = [
  STATE_BASE_1,
  STATE_BASE_2,
  STATE_BASE_3,
  STATE_BASE_3,
];
/** The base new rows are written against. */
export const STATE_BASE = STATE_BASE_3;
/** The first lean version whose rows keep the keys of `STATE_KEYS` short. */
export const SHORT_KEYS_FROM = 4;

/** Core's default limits. */
export const LIMITS_BASE: Readonly<Record<string, JsonValue>> = deepFreeze({
  maxIterations: 10,
  loopThreshold: 5,
  loopExemptTools: [],
  maxOutputRepairs: 2,
  maxCallsPerReply: 32,
  maxModelRetries: 2,
  modelRetryBackoffMs: 500,
  loopRecoveries: 0,
  budget: {},
});

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sets a key as plain data (a key such as `__proto__` stays a key). */
function put(target: Obj, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const SAME = Symbol('same');
const UNEXPRESSIBLE = Symbol('unexpressible');

/**
 * What of `value` differs from `base`: SAME when nothing does; for two objects, the keys that
 * differ (recursively); UNEXPRESSIBLE when `value` lacks a key `base` has (a merge would add it).
 */
function diff(value: unknown, base: unknown): unknown {
  if (isObject(value) && isObject(base)) {
    const out: Obj = {};
    let changed = false;
    for (const key of Object.keys(base)) if (!Object.hasOwn(value, key)) return UNEXPRESSIBLE;
    for (const key of Object.keys(value)) {
      const d = Object.hasOwn(base, key) ? diff(value[key], base[key]) : value[key];
      if (d === UNEXPRESSIBLE) return UNEXPRESSIBLE;
      if (d === SAME) continue;
      put(out, key, d);
      changed = true;
    }
    return changed ? out : SAME;
  }
  return sameJson(value as JsonValue, base as JsonValue) ? SAME : value;
}

/** `stored` merged over `base` (the inverse of `diff`). */
function merge(stored: unknown, base: unknown): unknown {
  if (!isObject(stored) || !isObject(base)) return stored;
  const out: Obj = {};
  for (const key of Object.keys(base)) put(out, key, base[key]);
  for (const key of Object.keys(stored)) put(out, key, Object.hasOwn(base, key) ? merge(stored[key], base[key]) : stored[key]);
  return out;
}

/**
 * The lean form of an object (a copy with the mark), or the object itself when the encoding cannot
 * express it. Against a list of bases by version, the newest is used and its version is the mark.
 */
export function toLean(value: Obj, bases: Readonly<Obj> | readonly Readonly<Obj>[]): Obj {
  if (Object.hasOwn(value, LEAN_MARK)) return value;
  const list = Array.isArray(bases) ? (bases as readonly Readonly<Obj>[]) : [bases as Readonly<Obj>];
  const d = diff(value, list.at(-1));
  if (d === UNEXPRESSIBLE) return value;
  const out: Obj = { [LEAN_MARK]: list.length };
  if (d !== SAME) for (const key of Object.keys(d as Obj)) put(out, key, (d as Obj)[key]);
  return out;
}

/**
 * Reads a stored value back: a lean object is merged over its base (`bases[version - 1]` for a list
 * of bases by lean version; one base serves every version); anything else is returned as it is.
 */
export function fromLean(stored: unknown, bases: Readonly<Obj> | readonly Readonly<Obj>[]): unknown {
  if (!isObject(stored)) return stored;
  const version = stored[LEAN_MARK];
  const list = Array.isArray(bases) ? (bases as readonly Readonly<Obj>[]) : [bases as Readonly<Obj>];
  const base = typeof version === 'number' && Number.isInteger(version) && version >= 1 ? list[version - 1] : undefined;
  if (base === undefined) return stored;
  const rest: Obj = {};
  for (const key of Object.keys(stored)) if (key !== LEAN_MARK) put(rest, key, stored[key]);
  return merge(rest, base);
}

/**
 * Short names for keys, by where they sit in an object: `keys` maps a key of the object to its short
 * name, `nested` the aliases of the object under a key (by its full name), `each` those of every
 * element of a list.
 */
interface Aliases {
  readonly keys?: Readonly<Record<string, string>>;
  readonly nested?: Readonly<Record<string, Aliases>>;
  readonly each?: Aliases;
}

/**
 * The short names of a stored state's keys (lean version 4 on): the keys a round rewrites (its
 * counters, its batch's calls, its request, its call ids) are most of the bytes of a checkpoint's
 * state, and Postgres logs them at every checkpoint. Each short name is one letter, which no key
 * of core's state is; a state that has such a key where a short name would go is kept with its
 * keys whole (`shortKeys`).
 */
export const STATE_KEYS: Aliases = {
  keys: { round: 'r', usage: 'u', batch: 'b', repeats: 'p', lastRequest: 'q', callIds: 'k' },
  nested: {
    usage: {
      keys: { inputTokens: 'i', outputTokens: 'o', totalTokens: 's', cost: 'c', modelCalls: 'm', toolCalls: 't' },
    },
    batch: {
      keys: { calls: 'c', notExecuted: 'n', held: 'h', parked: 'p', decisions: 'd' },
      nested: { calls: { each: { keys: { id: 'i', name: 'n', input: 'a' } } } },
    },
    lastRequest: { keys: { iteration: 'i', final: 'f', modelOverride: 'm', attempt: 'a', delayMs: 'd' } },
    callIds: { keys: { count: 'n', filter: 'f' } },
  },
};

/** The aliases of the object under `key` (an own key of `nested` only: `constructor` is not one). */
const nestedOf = (aliases: Aliases, key: string): Aliases | undefined =>
  aliases.nested !== undefined && Object.hasOwn(aliases.nested, key) ? aliases.nested[key] : undefined;

/** Whether renaming by `aliases` is exact for `value`: no key where a short name would go is one already. */
function canShorten(value: unknown, aliases: Aliases): boolean {
  if (Array.isArray(value)) return aliases.each === undefined || value.every((v) => canShorten(v, aliases.each as Aliases));
  if (!isObject(value)) return true;
  const short = new Set(Object.values(aliases.keys ?? {}));
  for (const key of Object.keys(value)) {
    if (short.has(key)) return false;
    const inner = nestedOf(aliases, key);
    if (inner !== undefined && !canShorten(value[key], inner)) return false;
  }
  return true;
}

/** `value` with its keys renamed by `aliases` (`long` false: to their short names; true: back), in their order. */
function rename(value: unknown, aliases: Aliases, long: boolean): unknown {
  if (Array.isArray(value))
    return aliases.each === undefined ? value : value.map((v) => rename(v, aliases.each as Aliases, long));
  if (!isObject(value)) return value;
  const names = aliases.keys ?? {};
  const back: Record<string, string> = {};
  for (const key of Object.keys(names)) back[names[key] as string] = key;
  const out: Obj = {};
  for (const key of Object.keys(value)) {
    const full = long ? (Object.hasOwn(back, key) ? (back[key] as string) : key) : key;
    const stored = long ? key : Object.hasOwn(names, key) ? (names[key] as string) : key;
    const inner = nestedOf(aliases, full);
    put(out, long ? full : stored, inner === undefined ? value[key] : rename(value[key], inner, long));
  }
  return out;
}

/**
 * A lean state of the newest version (`toLean` against `STATE_BASES`, mark `SHORT_KEYS_FROM`) with
 * its keys short (`STATE_KEYS`). When a key is one of the short names already (not a state core
 * writes), the keys stay whole and the mark says the previous version, whose base is the same.
 * Anything else (no mark: not lean) is returned as it is.
 */
export function shortKeys(lean: unknown): unknown {
  if (!isObject(lean) || lean[LEAN_MARK] !== SHORT_KEYS_FROM) return lean;
  if (canShorten(lean, STATE_KEYS)) return rename(lean, STATE_KEYS, false);
  const out: Obj = {};
  for (const key of Object.keys(lean)) put(out, key, key === LEAN_MARK ? SHORT_KEYS_FROM - 1 : lean[key]);
  return out;
}

/** The inverse of `shortKeys`: a stored lean state of version `SHORT_KEYS_FROM` on with its keys whole; anything else as it is. */
export function longKeys(stored: unknown): unknown {
  if (!isObject(stored)) return stored;
  const version = stored[LEAN_MARK];
  return typeof version === 'number' && version >= SHORT_KEYS_FROM ? rename(stored, STATE_KEYS, true) : stored;
}

/** The mark of a call-id filter kept as the positions of its set bits (see `packFilters`); core's filters are base64, which never holds it. */
const SPARSE = '~';
const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Bytes of core's call-id filter (768 bits, 128 base64 characters). */
const FILTER_BYTES = 96;

/**
 * A call-id filter (core's `callIds.filter`, the base64 of 96 bytes) as `~` and the position of
 * each set bit in two base64 digits, when that is shorter: a turn's first calls set a few of the 768
 * bits, and the filter is rewritten with the state at every checkpoint. Anything else (empty, not
 * a filter, or shorter as it is) is returned as it is.
 */
export function packFilter(filter: string): string {
  if (filter === '') return filter;
  const bytes = Buffer.from(filter, 'base64');
  if (bytes.length !== FILTER_BYTES || bytes.toString('base64') !== filter) return filter;
  let out = SPARSE;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === 0) continue;
    for (let k = 0; k < 8; k++) {
      if ((byte & (1 << k)) === 0) continue;
      const p = i * 8 + k;
      out += (DIGITS[p >> 6] as string) + (DIGITS[p & 63] as string);
      if (out.length >= filter.length) return filter;
    }
  }
  return out;
}

/** The filter `packFilter` packed (anything else as it is: a malformed one is left for core's parse to name). */
export function unpackFilter(stored: string): string {
  if (!stored.startsWith(SPARSE) || stored.length % 2 !== 1) return stored;
  const bytes = new Uint8Array(FILTER_BYTES);
  for (let i = 1; i < stored.length; i += 2) {
    const hi = DIGITS.indexOf(stored[i] as string);
    const lo = DIGITS.indexOf(stored[i + 1] as string);
    const p = hi * 64 + lo;
    if (hi < 0 || lo < 0 || p >= FILTER_BYTES * 8) return stored;
    bytes[p >> 3] = (bytes[p >> 3] as number) | (1 << (p & 7));
  }
  return Buffer.from(bytes).toString('base64');
}

/**
 * A stored state (lean or not) with `f` applied to its call-id filter and to its child turn's
 * (`agents.child`, a whole state), copied where it changes; any other shape is returned as it is.
 */
export function mapFilters(state: unknown, f: (filter: string) => string): unknown {
  if (!isObject(state)) return state;
  let out: Obj | null = null;
  const set = (key: string, value: unknown): void => {
    if (value === state[key]) return;
    out ??= { ...state };
    put(out, key, value);
  };
  const ids = state.callIds;
  if (isObject(ids) && typeof ids.filter === 'string') {
    const filter = f(ids.filter);
    if (filter !== ids.filter) set('callIds', { ...ids, filter });
  }
  const agents = state.agents;
  if (isObject(agents) && isObject(agents.child)) {
    const child = mapFilters(agents.child, f);
    if (child !== agents.child) set('agents', { ...agents, child });
  }
  return out ?? state;
}

/**
 * The mark of a `lastBatch` kept as a reference (see `refLastBatch`): a string, which core's
 * `lastBatch` (null or a list) never is.
 */
export const SAME_AS_BATCH = '=';

/** A batch call's signature as core's `lastBatch` keeps it: its name and input. */
const signature = (call: unknown): unknown => (isObject(call) ? { name: call.name, input: call.input } : call);

/**
 * A state (full, before `toLean`) with its `lastBatch` as `SAME_AS_BATCH` when it equals its
 * batch's calls' names and inputs, as it does from the reply that made the batch until the next
 * reply: the calls' inputs are then stored once per checkpoint, not twice. Compared as JSON, so
 * `derefLastBatch` gives back exactly what was there. Anything else is returned as it is.
 */
export function refLastBatch(state: Obj): Obj {
  const last = state.lastBatch;
  const batch = state.batch;
  if (!Array.isArray(last) || last.length === 0 || !isObject(batch) || !Array.isArray(batch.calls)) return state;
  const calls = batch.calls as unknown[];
  if (calls.length !== last.length || !calls.every((c) => isObject(c) && Object.hasOwn(c, 'input'))) return state;
  if (!last.every((l) => isObject(l) && Object.keys(l).length === 2 && Object.hasOwn(l, 'name') && Object.hasOwn(l, 'input')))
    return state;
  if (!sameJson(calls.map(signature) as JsonValue, last as JsonValue)) return state;
  const out: Obj = {};
  for (const key of Object.keys(state)) put(out, key, key === 'lastBatch' ? SAME_AS_BATCH : state[key]);
  return out;
}

/** The inverse of `refLastBatch` (after `fromLean`): a `lastBatch` of `SAME_AS_BATCH` as its batch's calls' names and inputs. */
export function derefLastBatch(state: unknown): unknown {
  if (!isObject(state) || state.lastBatch !== SAME_AS_BATCH) return state;
  const batch = state.batch;
  if (!isObject(batch) || !Array.isArray(batch.calls)) return state; // left for core's parse to name
  const out: Obj = {};
  for (const key of Object.keys(state)) put(out, key, key === 'lastBatch' ? batch.calls.map(signature) : state[key]);
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

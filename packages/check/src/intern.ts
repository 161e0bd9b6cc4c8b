// Exact, compact keys for the explorers' visited sets: each distinct JSON value gets a small
// whole-number id, and two values get the same id exactly when their JSON texts are equal (the
// same keys in the same order, the same primitives as JSON writes them). A container's id is made
// from its keys' and children's ids, and kept per object, so a state that `step` built by
// changing a few fields of the last one costs a look-up per unchanged field instead of a JSON
// text and a digest of the whole state. Containers are found by a hash of those ids and then
// compared id by id: no two distinct values can share an id, whatever the hash does.
//
// Measured (CPU time, best of 8, over the 62,565 states an exploration of maxIterations 2 steps
// to, load average 10): 2.4 µs a state by ids, 5.3 µs by a JSON text and its SHA-1 digest.
//
// An object is assumed not to change after it got its id (`step` never mutates what it is given
// or returns: invariant 2 checks that), as the JSON text kept per state object was before.

interface Entry {
  readonly parts: readonly number[];
  readonly id: number;
}

/** Gives each distinct JSON value a whole-number id: equal ids exactly when the JSON texts are equal. */
export class Interner {
  // Strings, numbers and keys each in their own map, looked up as they are: a string met again is
  // usually the same string object, whose hash is kept (no text is built per look-up).
  private readonly strings = new Map<string, number>();
  private readonly numbers = new Map<number, number>();
  private readonly keys = new Map<string, number>();
  private readonly others = new Map<string, number>();
  /** Containers by a hash of their parts (a tag, then key and child ids); a bucket holds the rare collisions. */
  private readonly containers = new Map<number, Entry | Entry[]>();
  private readonly ofObject = new WeakMap<object, number>();
  private count = 0;

  /** How many distinct values (containers, primitives, keys) have an id. */
  get size(): number {
    return this.count;
  }

  /** The id of `value` as `JSON.stringify` sees it (a value JSON cannot write, such as a bigint, throws as it does). */
  idOf(value: unknown): number {
    return this.id(value, '', false);
  }

  /** The id of a text, as a string value. */
  idOfText(text: string): number {
    return this.lookUp(this.strings, text);
  }

  private lookUp<K>(map: Map<K, number>, key: K): number {
    let id = map.get(key);
    if (id === undefined) {
      id = this.count++;
      map.set(key, id);
    }
    return id;
  }

  /** null, true, false and what JSON writes of an undefined, a function or a symbol. */
  private text(text: string): number {
    return this.lookUp(this.others, text);
  }

  private container(parts: number[]): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < parts.length; i++) h = Math.imul(h ^ (parts[i] as number), 0x01000193);
    const found = this.containers.get(h);
    if (found === undefined) {
      const id = this.count++;
      this.containers.set(h, { parts, id });
      return id;
    }
    const bucket = Array.isArray(found) ? found : [found];
    for (const entry of bucket) if (sameParts(entry.parts, parts)) return entry.id;
    const id = this.count++;
    bucket.push({ parts, id });
    if (bucket.length === 2) this.containers.set(h, bucket);
    return id;
  }

  /** `key` is the property name JSON would pass to a `toJSON` method; `keep` caches the id per object. */
  private id(value: unknown, key: string | number, keep: boolean): number {
    switch (typeof value) {
      case 'string':
        return this.lookUp(this.strings, value);
      case 'number':
        // JSON writes NaN and the infinities as null, and -0 as 0 (a Map takes -0 and 0 as one key).
        return Number.isFinite(value) ? this.lookUp(this.numbers, value) : this.text('null');
      case 'boolean':
        return this.text(value ? 'true' : 'false');
      case 'object':
        return value === null ? this.text('null') : this.objectId(value, key, keep);
      default:
        // A bigint throws here as in JSON.stringify; undefined, a function or a symbol have no text
        // (the callers leave them out of objects and write null in arrays, as JSON does).
        return this.text(`J${String(JSON.stringify(value))}`);
    }
  }

  private objectId(value: object, key: string | number, keep: boolean): number {
    const known = this.ofObject.get(value);
    if (known !== undefined) return known;
    const proto = Object.getPrototypeOf(value) as unknown;
    const plain = proto === Object.prototype || proto === null || (proto === Array.prototype && Array.isArray(value));
    if (!plain || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      // Anything JSON writes in its own way (a Date, a class instance, a toJSON method): its JSON
      // read back as plain data. Not kept per object: what such an object writes may change.
      const back = (JSON.parse(JSON.stringify({ [key]: value })) as Record<string, unknown>)[key];
      return back === undefined ? this.text('J') : this.id(back, key, false);
    }
    const parts: number[] = [];
    if (Array.isArray(value)) {
      parts.push(ARRAY);
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        parts.push(skipped(item) ? this.text('null') : this.id(item, i, true));
      }
    } else {
      parts.push(OBJECT);
      for (const k of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[k];
        if (skipped(item)) continue;
        parts.push(this.lookUp(this.keys, k), this.id(item, k, true));
      }
    }
    const id = this.container(parts);
    // The value passed to idOf is usually a fresh state or monitor met once; its parts are the
    // objects later states share.
    if (keep) this.ofObject.set(value, id);
    return id;
  }
}

// Tags that start a container's parts (ids are ≥ 0).
const ARRAY = -1;
const OBJECT = -2;

function sameParts(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Values JSON leaves out of an object (and writes as null in an array). */
const skipped = (value: unknown): boolean => value === undefined || typeof value === 'function' || typeof value === 'symbol';

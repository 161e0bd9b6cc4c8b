// Seals for suspended turns that travel through clients. A suspended turn carries everything a
// resume trusts (the state with its parked inputs and decisions, the transcript, the grants):
// sealed with the caller's secret, a resume can refuse anything that was edited on the way.
// HMAC-SHA-256 over the canonical JSON of the parts and the seal's id, with Web Crypto (Node and
// browsers alike). A seal proves the parts are what was suspended; it cannot stop the same parts
// from being resumed twice. Its unique id lets the caller record "resumed" and refuse a second
// resume; only a store with one writer per turn prevents it for sure.

import { canonicalJson } from './signature.js';
import type { JsonValue } from './types.js';

/** The seal of a suspended turn: a unique id, and the MAC of the sealed parts with that id. */
export interface Seal {
  /** Unique per seal: record it when the turn is resumed, and refuse a second resume of the same id. */
  readonly id: string;
  /** base64url HMAC-SHA-256 of the canonical JSON of `{ id, parts }`. */
  readonly mac: string;
}

/** The shortest secret accepted, in bytes. */
export const MIN_SEAL_SECRET_BYTES = 32;

/**
 * Thrown when sealing or resuming a sealed suspended turn is refused: the secret is shorter than
 * `MIN_SEAL_SECRET_BYTES`, the result has no seal, or its seal does not verify (it was changed after it was sealed).
 */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

function secretBytes(secret: string | Uint8Array): Uint8Array {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (!(bytes instanceof Uint8Array) || bytes.length < MIN_SEAL_SECRET_BYTES)
    throw new SealError(
      `A seal secret must be a string or Uint8Array of at least ${MIN_SEAL_SECRET_BYTES} bytes (use 32 random bytes, kept on the server).`,
    );
  return bytes;
}

async function mac(secret: string | Uint8Array, id: string, parts: JsonValue): Promise<string> {
  const key = await crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const signed = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(canonicalJson({ id, parts })));
  let binary = '';
  for (const byte of new Uint8Array(signed)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Seals the parts of a suspended turn (plain JSON: a JSON round trip must not change them).
 *
 * @example
 * const seal = await sealParts({ state, transcript, grants }, process.env.TURN_SECRET!);
 */
export async function sealParts(parts: JsonValue, secret: string | Uint8Array): Promise<Seal> {
  const id = crypto.randomUUID();
  return { id, mac: await mac(secret, id, parts) };
}

/**
 * Throws a `SealError` unless `seal` is a seal of exactly these parts made with `secret`. The
 * comparison takes the same time wherever the MACs differ.
 */
export async function verifySeal(parts: JsonValue, seal: unknown, secret: string | Uint8Array): Promise<void> {
  const s = seal as { id?: unknown; mac?: unknown } | null | undefined;
  if (s === null || typeof s !== 'object' || typeof s.id !== 'string' || typeof s.mac !== 'string')
    throw new SealError(
      'The suspended turn has no seal, but a seal secret was given: resume only results sealed by your server.',
    );
  const expected = await mac(secret, s.id, parts);
  const a = new TextEncoder().encode(expected);
  const b = new TextEncoder().encode(s.mac);
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i % Math.max(1, b.length)] ?? 0);
  if (diff !== 0)
    throw new SealError(
      `The seal '${s.id.slice(0, 64)}' does not verify: the suspended turn was changed after it was sealed (or sealed with another secret). Refusing to resume it.`,
    );
}

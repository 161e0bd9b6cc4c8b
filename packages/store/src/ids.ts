// Turn ids: `turn_` and a UUID of version 7, whose first 48 bits are the time in milliseconds. Ids
// made one after another sort in the order they were made, so each new turn's key lands at the
// right end of the primary-key indexes (of the turns, their log and their journal) rather than at
// a random place: index pages fill in order instead of splitting all over, which the write-ahead
// log pays for.

import { randomBytes } from 'node:crypto';

/** A new turn id: `turn_<uuid v7>`. */
export function newTurnId(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  let time = Math.floor(now);
  for (let i = 5; i >= 0; i -= 1) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70; // version 7
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // the RFC 9562 variant
  const hex = bytes.toString('hex');
  return `turn_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

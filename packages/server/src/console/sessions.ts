// Console sign-in: the browser never holds the API token. Signing in with the token makes a
// session: a random id in an HttpOnly, SameSite=Strict cookie, and a CSRF token of its own that
// every form carries. Sessions live in the server's memory and end after `ttlMs` or on sign-out.

import { randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'turnkit_session';

export interface Session {
  readonly id: string;
  readonly csrf: string;
  readonly expires: number;
}

export class Sessions {
  readonly #sessions = new Map<string, Session>();
  constructor(
    readonly ttlMs: number,
    readonly max = 1000,
  ) {}

  create(now = Date.now()): Session {
    const session = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      expires: now + this.ttlMs,
    };
    // The oldest session goes first when there are too many (a Map keeps insertion order).
    if (this.#sessions.size >= this.max) this.#sessions.delete(this.#sessions.keys().next().value ?? '');
    this.#sessions.set(session.id, session);
    return session;
  }

  get(id: string | undefined, now = Date.now()): Session | null {
    if (id === undefined) return null;
    const session = this.#sessions.get(id);
    if (session === undefined) return null;
    if (session.expires <= now) {
      this.#sessions.delete(id);
      return null;
    }
    return session;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }
}

/** Whether a form's CSRF field is the session's token (constant time). */
export function csrfMatches(session: Session, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

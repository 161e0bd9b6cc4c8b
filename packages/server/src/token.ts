// The API's one secret: a bearer token. It is given by the environment (TURNKIT_SERVER_TOKEN) or
// generated on first start; a generated token is printed once and only its SHA-256 is kept, so a
// token file on disk never holds the token itself. Tokens are compared in constant time.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** The environment variable that gives the server its token. */
export const TOKEN_ENV = 'TURNKIT_SERVER_TOKEN';

/** Tokens shorter than this are refused: a bearer token is the only door. */
export const MIN_TOKEN_LENGTH = 24;

/** What the server checks a presented token against: the SHA-256 of the token, never the token. */
export interface TokenCheck {
  readonly sha256: Buffer;
}

/** A fresh token: 32 random bytes, base64url (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The check for a token (validates its shape: printable ASCII, at least MIN_TOKEN_LENGTH characters). */
export function tokenCheck(token: string): TokenCheck {
  if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token))
    throw new TypeError(
      `The server token must be at least ${MIN_TOKEN_LENGTH} printable ASCII characters without spaces; set ${TOKEN_ENV} to such a value (for instance one from \`openssl rand -base64 32\`).`,
    );
  return { sha256: digest(token) };
}

/**
 * Whether `presented` is the token. Both sides are hashed first, so the comparison takes the same
 * time whatever the presented value's length and however much of it matches.
 */
export function tokenMatches(check: TokenCheck, presented: string | null | undefined): boolean {
  return timingSafeEqual(check.sha256, digest(typeof presented === 'string' ? presented : '')) && typeof presented === 'string';
}

export interface LoadedToken {
  readonly check: TokenCheck;
  /** Set only when the token was generated now: print it once, it is kept nowhere else. */
  readonly created: string | null;
  /** Where the token came from, for the start-up line (never the token itself). */
  readonly source: 'env' | 'file' | 'created';
}

/**
 * The server's token: from `env[TOKEN_ENV]` when set, else the hash in `file` from an earlier start,
 * else a new token whose hash is written to `file` (mode 0600) and which is returned once in `created`.
 */
export async function loadToken(options: { readonly env?: NodeJS.ProcessEnv; readonly file: string }): Promise<LoadedToken> {
  const fromEnv = (options.env ?? process.env)[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return { check: tokenCheck(fromEnv), created: null, source: 'env' };
  let text: string | null = null;
  try {
    text = await readFile(options.file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== null) {
    const hex = text.trim();
    if (!/^[0-9a-f]{64}$/.test(hex))
      throw new Error(
        `${options.file} does not hold a token hash (64 hex digits); delete it to make a new token, or set ${TOKEN_ENV}.`,
      );
    return { check: { sha256: Buffer.from(hex, 'hex') }, created: null, source: 'file' };
  }
  const token = generateToken();
  const check = tokenCheck(token);
  await mkdir(dirname(options.file), { recursive: true });
  await writeFile(options.file, `${check.sha256.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return { check, created: token, source: 'created' };
}

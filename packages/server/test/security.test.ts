import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadToken, MIN_TOKEN_LENGTH, TOKEN_ENV, tokenCheck, tokenMatches } from '../src/token.js';
import { startServer, type TestServer, TOKEN } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startServer({ maxBodyBytes: 4096 });
});
afterAll(async () => {
  await t.close();
});

/** Signs in to the console; returns the session cookie and the page's CSRF token. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(`${t.url}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token: TOKEN }),
    headers: { origin: t.url },
    redirect: 'manual',
  });
  expect(login.status).toBe(303);
  const setCookie = login.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/HttpOnly/);
  expect(setCookie).toMatch(/SameSite=Strict/);
  expect(setCookie).not.toContain(TOKEN);
  const cookie = setCookie.split(';')[0] ?? '';
  const page = await (await fetch(`${t.url}/console`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  expect(csrf).not.toBe('');
  return { cookie, csrf };
}

describe('who gets in', () => {
  it('binds to 127.0.0.1 by default', () => {
    expect(t.server.host).toBe('127.0.0.1');
    expect(t.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses API requests without the bearer token, with the wrong one, or with it in the URL', async () => {
    const tries: [string, RequestInit][] = [
      ['/api/turns', {}],
      ['/api/turns', { headers: { authorization: `Bearer ${TOKEN}x` } }],
      ['/api/turns', { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` } }],
      ['/api/turns', { headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } }],
      [`/api/turns?token=${TOKEN}`, {}],
      [`/api/turns?access_token=${TOKEN}`, {}],
      ['/api/openapi.json', {}],
    ];
    for (const [path, init] of tries) {
      const response = await fetch(`${t.url}${path}`, init);
      expect(response.status, path).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="turnkit"');
      expect(await response.text()).not.toContain(TOKEN);
    }
    expect((await t.api('/api/turns')).status).toBe(200);
  });

  it('compares tokens in constant time over their hashes: only the token itself matches', () => {
    const check = tokenCheck(TOKEN);
    expect(tokenMatches(check, TOKEN)).toBe(true);
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (other) => tokenMatches(check, other) === (other === TOKEN)),
      { numRuns: 500 },
    );
    expect(tokenMatches(check, undefined)).toBe(false);
    expect(() => tokenCheck('short')).toThrow(new RegExp(`at least ${MIN_TOKEN_LENGTH} printable`));
  });

  it('refuses bodies over the limit with 413', async () => {
    const big = JSON.stringify({ agent: 'support', input: 'x'.repeat(5000) });
    const response = await t.api('/api/turns', { method: 'POST', body: big });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
    const form = await fetch(`${t.url}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'x'.repeat(20_000) }),
    });
    expect(form.status).toBe(413);
  });

  it('refuses every oversized body on one keep-alive connection with 413 and the JSON error', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const body = JSON.stringify({ agent: 'support', input: 'x'.repeat(300_000) });
    const post = (path: string, payload: string) =>
      new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
        const req = request(
          `${t.url}${path}`,
          {
            method: 'POST',
            agent,
            headers: {
              authorization: `Bearer ${TOKEN}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(payload),
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              text += chunk;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    try {
      const answers = [];
      for (let i = 0; i < 4; i += 1) answers.push(await post('/api/turns', body));
      // A small body after them is read from its start on the same connection.
      answers.push(await post('/api/turns', JSON.stringify({ agent: 'support', input: 'Where is my order K-1?' })));
      expect(answers.map((a) => a.status)).toEqual([413, 413, 413, 413, 201]);
      for (const answer of answers.slice(0, 4))
        expect(JSON.parse(answer.body)).toEqual({
          error: {
            code: 'body_too_large',
            message: "The body is over 4096 bytes; send less (the limit is the server's maxBodyBytes).",
          },
        });
      expect(answers.slice(1).every((a) => a.reused)).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  it('shows the console only after sign-in; a wrong token sees nothing', async () => {
    const id = await t.store.submit({ agent: 'support', input: 'Where is my order S-1?' });
    const anonymous = await fetch(`${t.url}/console`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/console/login');
    for (const path of [`/console/turns/${id}`, `/console/turns/${id}/stream`, '/console/stream']) {
      const response = await fetch(`${t.url}${path}`, { redirect: 'manual' });
      expect(response.status, path).toBe(303);
      expect(await response.text()).not.toContain(id);
    }
    const wrong = await fetch(`${t.url}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'guess' }),
      headers: { origin: t.url },
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const forged = await fetch(`${t.url}/console`, { headers: { cookie: 'turnkit_session=forged' }, redirect: 'manual' });
    expect(forged.status).toBe(303);
  });

  it('refuses console forms without the CSRF token or from another origin', async () => {
    const { cookie, csrf } = await signIn();
    const id = await t.store.submit({ agent: 'support', input: 'Refund order X-1, 1 EUR.' });
    const post = (body: Record<string, string>, headers: Record<string, string> = { origin: t.url }) =>
      fetch(`${t.url}/console/turns/${id}/cancel`, {
        method: 'POST',
        body: new URLSearchParams(body),
        headers: { cookie, ...headers },
        redirect: 'manual',
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ csrf: `${csrf}x` })).status).toBe(403);
    expect((await post({ csrf }, { origin: 'https://evil.example' })).status).toBe(403);
    // No Origin and no Sec-Fetch-Site: not a browser form from this console either.
    expect((await post({ csrf }, {})).status).toBe(403);
    expect((await t.store.get(id))?.decisions).toEqual([]);
    const ok = await post({ csrf, reason: 'test' }, { origin: t.url });
    expect(ok.status).toBe(303);
    expect((await t.store.get(id))?.decisions.map((d) => d.kind)).toEqual(['cancel']);
  });

  it('sends a content security policy that allows no inline script and nothing from elsewhere', async () => {
    const response = await fetch(`${t.url}/console/login`);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await response.text()).not.toMatch(/<script>|style="/);
  });

  it('never writes the token to the console or a log while serving', async () => {
    const writes: string[] = [];
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (writes.push(String(chunk)), true));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (writes.push(String(chunk)), true));
    try {
      await t.api('/api/turns');
      await fetch(`${t.url}/api/turns`, { headers: { authorization: 'Bearer wrong-token-wrong-token-wrong' } });
      await signIn();
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    expect(writes.join('')).not.toContain(TOKEN);
  });
});

describe('loadToken', () => {
  it('generates a token on first start, keeps only its hash, and reuses the hash later', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'turnkit-token-')), 'server-token');
    const first = await loadToken({ env: {}, file });
    expect(first.source).toBe('created');
    expect(first.created).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await readFile(file, 'utf8');
    expect(stored).not.toContain(first.created ?? '');
    expect(stored.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await loadToken({ env: {}, file });
    expect(second).toMatchObject({ source: 'file', created: null });
    expect(tokenMatches(second.check, first.created)).toBe(true);
  });

  it('takes the token from the environment, and names the variable when it is too short', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'turnkit-token-')), 'server-token');
    const fromEnv = await loadToken({ env: { [TOKEN_ENV]: TOKEN }, file });
    expect(fromEnv).toMatchObject({ source: 'env', created: null });
    expect(tokenMatches(fromEnv.check, TOKEN)).toBe(true);
    await expect(stat(file)).rejects.toThrow();
    await expect(loadToken({ env: { [TOKEN_ENV]: 'short' }, file })).rejects.toThrow(TOKEN_ENV);
  });
});

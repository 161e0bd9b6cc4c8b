// A partitioned worker stops writing once its lease is gone. Worker A runs on the far side of a
// network link (its own network namespace and address, over a veth pair, where the machine allows
// it: see fixtures/partition-link.ts) and starts a slow tool; the link is cut, so A's connections hang
// rather than fail. A's lease expires, worker B (on this host) takes the turn with a new fencing
// token and ends it (A's call gets `interrupted`). The link comes back: A's tool finishes and A
// tries to write, and every write is refused by the token. The turn's log shows token 1, then 2,
// never 1 again.

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.js';
import { createStore, openSql } from '../src/internal.js';
import { LOG_ROWS } from '../src/sql/values.js';
import { type Link, openLink } from './fixtures/partition-link.js';
import { dropSchema, POSTGRES_URL, scratchSchema, WHY_SKIPPED } from './postgres.js';
import { nodeScript } from './node-script.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/partition-worker.ts', import.meta.url));
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Printed {
  readonly event?: { readonly type: string; readonly how?: string; readonly token?: number };
  readonly fault?: string;
}

function startWorker(prefix: readonly string[], url: string, schema: string, toolMs: number, name: string) {
  const printed: Printed[] = [];
  const command = [...prefix, process.execPath, nodeScript(WORKER), url, schema, String(toolMs), name];
  const child: ChildProcess = spawn(command[0] as string, command.slice(1), { cwd: REPO, stdio: ['ignore', 'pipe', 'ignore'] });
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) printed.push(JSON.parse(line) as Printed);
  });
  return { child, printed };
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string, ms = 90_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await pause(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe.skipIf(POSTGRES_URL === undefined)(
  `a partitioned worker${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    const schema = scratchSchema('partition');
    let link: Link | null = null;
    const children: ChildProcess[] = [];
    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL');
      await link?.close();
      await dropSchema(schema);
    });

    it('stops writing once its lease is gone: the fencing token refuses its writes after the link comes back', async () => {
      const sql = await openSql(POSTGRES_URL, { schema });
      const store = createStore(sql);
      link = await openLink(POSTGRES_URL ?? '', process.pid);
      const id = await store.submit({ agent: 'partition', input: 'work slowly', id: 'partitioned' });

      const a = startWorker(link.prefix, link.url, schema, 4000, 'far');
      children.push(a.child);
      const started = async (): Promise<boolean> =>
        (
          await sql.query(
            `SELECT 1 FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) AND started_token = 1`,
            [id],
          )
        ).length > 0;
      await waitFor(started, 'worker A to start its tool');
      link.cut();
      const cutAt = Date.now();

      const b = startWorker([], POSTGRES_URL ?? '', schema, 100, 'near');
      children.push(b.child);
      await waitFor(async () => (await store.get(id))?.status === 'stopped', 'worker B to take the turn over and end it');
      const takeoverMs = Date.now() - cutAt;
      link.restore();
      await waitFor(() => a.printed.some((p) => p.event?.type === 'left'), 'worker A to hear that its lease is gone');

      const turn = await store.get(id);
      const log = await sql.query(
        `SELECT seq, kind, lease_token FROM ${LOG_ROWS} l WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY seq`,
        [id],
      );
      const tokens = log.map((r) => Number(r.lease_token));
      const [row] = await sql.query('SELECT lease_token FROM turnkit_turns WHERE id = $1', [id]);
      const refused = a.printed.filter((p) => p.fault === 'LeaseLostError' || p.fault === 'ConflictError').length;
      testLog(
        [
          `partition (${link.mode}${link.why === null ? '' : `: ${link.why}`}):`,
          `  worker A claimed with token ${a.printed.find((p) => p.event?.type === 'claimed')?.event?.token}; link cut; B took over after ${takeoverMs} ms with token ${b.printed.find((p) => p.event?.type === 'claimed')?.event?.token}`,
          `  log tokens in order: ${tokens.join(' ')}`,
          `  A after the link came back: ${a.printed.find((p) => p.event?.type === 'left')?.event?.how}, ${refused} write(s) refused by the fencing token`,
        ].join('\n'),
      );
      // The far worker held token 1, the near one took token 2, and the log never goes back to 1.
      expect(a.printed.find((p) => p.event?.type === 'claimed')?.event?.token).toBe(1);
      expect(b.printed.find((p) => p.event?.type === 'claimed')?.event?.token).toBe(2);
      expect(Number(row?.lease_token)).toBe(2);
      expect(tokens).toEqual([...tokens].sort((x, y) => x - y));
      expect(tokens.at(-1)).toBe(2);
      // A's slow tool finished after the takeover, but its result was never written: the call is `interrupted`.
      const result = turn?.transcript.find((m) => m.role === 'tool');
      expect(result).toMatchObject({ result: { callId: 'work', isError: true, output: expect.stringMatching(/^interrupted/) } });
      expect(turn?.transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'done' });
      expect(a.printed.find((p) => p.event?.type === 'left')?.event?.how).toBe('lost');
      expect(refused).toBeGreaterThanOrEqual(1);
      if (process.getuid?.() === 0) expect(link.mode).toBe('netns');
      await store.close();
    }, 180_000);
  },
);

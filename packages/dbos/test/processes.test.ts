// Turns on DBOS across processes, on a real Postgres: a process that runs turns is killed with
// SIGKILL while two tools run, in a turn and in a tree's child turn, and a process launched after
// it recovers both (DBOS runs each workflow again; the journal answers the batch): each
// non-idempotent effect ran at most once. Then
// approvals and cancels reach a turn another process runs, through the client API of this one
// (a client only: it runs no turn).

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { transcriptLines } from '@turnkit/testing';
import {
  CallAlreadyDecidedError,
  type StoredStatus,
  type StoredTurn,
  TurnNotFoundError,
  TurnNotWaitingError,
  UnknownCallError,
  type WatchEvent,
} from '@turnkit/store';
import { INTERRUPTED } from '@turnkit/store/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbosTurns, type DbosTurnsClient } from '../src/index.js';
import { dropDatabase, freshDatabase, POSTGRES_URL, WHY_SKIPPED } from './postgres.js';
import { nodeScript } from '../../store/test/node-script.js';

const PROCESS = fileURLToPath(new URL('./fixtures/dbos-process.ts', import.meta.url));
const TURNKIT = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

interface Running {
  readonly child: ChildProcess;
  /** Resolves when the process has printed `line`. */
  readonly printed: (line: string) => Promise<void>;
  readonly exited: Promise<unknown>;
}

function start(url: string, effects: string, hang = false): Running {
  const child = spawn(process.execPath, [nodeScript(PROCESS), url, effects, ...(hang ? ['hang'] : [])], {
    cwd: REPO,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const seen: string[] = [];
  const waiting: { line: string; resolve: () => void }[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    seen.push(line);
    for (const w of waiting.filter((x) => x.line === line)) w.resolve();
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    child,
    exited,
    printed: (line) =>
      seen.includes(line)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiting.push({ line, resolve });
            void exited.then(() => reject(new Error(`the process exited before it printed '${line}'`)));
          }),
  };
}

/** The turn once its status is `status`. */
async function until(client: DbosTurnsClient, id: string, status: StoredStatus): Promise<StoredTurn> {
  for (;;) {
    const turn = await client.get(id);
    if (turn?.status === status) return turn;
    if (turn !== null && ['stopped', 'failed', 'cancelled'].includes(turn.status))
      throw new Error(`turn '${id}' ended ${turn.status}, not ${status}: ${JSON.stringify(turn.error)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(POSTGRES_URL === undefined)(
  `DBOS turns across processes${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnkit-dbos-'));
    const effects = join(dir, 'effects.log');
    const lines = (): string[] => readFileSync(effects, 'utf8').split('\n').filter(Boolean);
    let url: string;
    let client: DbosTurnsClient;
    let runner: Running | null = null;

    beforeAll(async () => {
      url = await freshDatabase('processes');
      writeFileSync(effects, '');
    }, 60_000);
    afterAll(async () => {
      runner?.child.stdin?.end();
      await runner?.exited;
      await client?.close();
      await dropDatabase(url);
      rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it('a process killed while its tools run, in a turn and in a child turn of a tree: another recovers both, and each effect ran at most once unless idempotent', async () => {
      const first = start(url, effects, true);
      await first.printed('ready');
      // This process only submits and reads: the turns go on DBOS's queue for a process that runs turns.
      client = await createDbosTurns({ databaseUrl: url });
      expect(client.runsTurns).toBe(false);
      const id = await client.submit({ agent: 'crash', input: 'run all three', id: 'crash-1' });
      // The same batch in a child turn of a tree (the lead's transfer_task `t1`).
      const tree = await client.submit({ agent: 'lead', input: 'have it done', id: 'lead-1' });
      const child = `${tree}/t1`;
      for (const turnId of [id, child]) {
        await first.printed(`started hang ${turnId}`);
        await first.printed(`started retry ${turnId}`);
      }
      // `record` has finished in both: the kill comes once its results are journaled.
      const recorded = async (turnId: string, callTurn: string | undefined): Promise<boolean> =>
        (await client.get(turnId))?.toolCalls.find((c) => c.callId === 'c1' && c.turn === callTurn)?.result != null;
      while (!(await recorded(id, undefined)) || !(await recorded(tree, child)))
        await new Promise((resolve) => setTimeout(resolve, 10));
      first.child.kill('SIGKILL');
      await first.exited;
      expect((await client.get(id))?.status).toBe('dispatching');
      expect((await client.get(tree))?.status).toBe('delegating');

      runner = start(url, effects);
      await runner.printed('ready');
      const turn = await until(client, id, 'stopped');
      const lead = await until(client, tree, 'stopped');
      // `record` finished before the kill: its journaled result is used. `hang` started and never
      // reported: `interrupted`, not run again. `retry` is idempotent: run again. The same in the child turn.
      expect(lines().sort()).toEqual(
        [id, child].flatMap((t) => [`hang ${t} c2`, `record ${t} c1`, `retry ${t} c3`, `retry ${t} c3`]).sort(),
      );
      const batch = [
        'assistant: [c1 record, c2 hang, c3 retry]',
        'tool c1 record: ok "recorded"',
        `tool c2 hang: error ${INTERRUPTED}`,
        'tool c3 retry: ok "retried"',
        'assistant: all three ran',
      ];
      expect(transcriptLines(turn.transcript)).toEqual(['user: run all three', ...batch]);
      expect(turn.toolCalls.map((c) => [c.callId, c.result?.isError])).toEqual([
        ['c1', false],
        ['c2', true],
        ['c3', false],
      ]);
      expect(transcriptLines(lead.transcript)).toEqual([
        'user: have it done',
        'assistant: [t1 transfer_task]',
        'tool t1 transfer_task: ok "all three ran"',
        'assistant: the team ran all three',
      ]);
      expect(lead.children?.map((c) => [c.id, transcriptLines(c.transcript)])).toEqual([
        [child, ['user: run all three', ...batch]],
      ]);
    }, 90_000);

    it('approvals and cancels from another process, through the client API', async () => {
      expect(runner).not.toBeNull();
      const id = await client.submit({ agent: 'approve', input: 'deploy the api' });
      const parked = await until(client, id, 'awaiting_approval');
      expect(parked.parked.map((p) => p.call.id)).toEqual(['d1']);
      await expect(client.decide(id, { nope: { type: 'approve' } })).rejects.toBeInstanceOf(UnknownCallError);
      await expect(client.decide('no-such-turn', { d1: { type: 'approve' } })).rejects.toBeInstanceOf(TurnNotFoundError);
      expect(await client.decide(id, { d1: { type: 'approve' } })).toEqual({ accepted: ['d1'], ignored: [] });
      await expect(client.decide(id, { d1: { type: 'reject' } })).rejects.toSatisfy(
        (e) => e instanceof CallAlreadyDecidedError || e instanceof TurnNotWaitingError,
      );
      const done = await until(client, id, 'stopped');
      expect(transcriptLines(done.transcript).slice(-2)).toEqual(['tool d1 deploy: ok "deployed api"', 'assistant: deployed']);
      expect(done.decisions.map((d) => [d.callId, d.status])).toEqual([['d1', 'applied']]);
      await expect(client.decide(id, { d1: { type: 'approve' } })).rejects.toBeInstanceOf(TurnNotWaitingError);

      const other = await client.submit({ agent: 'approve', input: 'deploy the api' });
      await until(client, other, 'awaiting_approval');
      const watched: WatchEvent[] = [];
      const watching = (async () => {
        for await (const event of client.watch(other, { pollMs: 20 })) watched.push(event);
      })();
      expect(await client.cancel(other, 'not today')).toBe(true);
      const cancelled = await until(client, other, 'cancelled');
      await watching;
      expect(cancelled.outcome).toEqual({ status: 'cancelled', reason: 'not today' });
      expect(cancelled.decisions.map((d) => [d.kind, d.status])).toEqual([['cancel', 'applied']]);
      expect(watched.at(-1)).toMatchObject({ type: 'status', status: 'cancelled' });
      expect(await client.cancel(other)).toBe(false);
      await expect(client.cancel('no-such-turn')).rejects.toBeInstanceOf(TurnNotFoundError);
      // The cancelled turn's deploy never ran: one deploy effect, the approved one.
      expect(lines().filter((l) => l.startsWith('deploy'))).toEqual([`deploy ${id} d1`]);
    }, 60_000);

    it('`turnkit serve --dbos URL`: the HTTP API over the same turns, run by the other process', async () => {
      if (!existsSync(TURNKIT)) throw new Error(`${TURNKIT} is missing: build the CLI first with \`npx tsc -b\`.`);
      const token = 'dbos-serve-token-0123456789-abcdefghij';
      const serve = spawn(process.execPath, [TURNKIT, 'serve', '--dbos', url, '--port', '0'], {
        cwd: REPO,
        env: { ...process.env, TURNKIT_SERVER_TOKEN: token, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise((resolve) => serve.on('exit', resolve));
      try {
        let stdout = '';
        const base = await new Promise<string>((resolve, reject) => {
          serve.stdout?.on('data', (chunk: Buffer) => {
            stdout += chunk.toString('utf8');
            const found = /console (http:\/\/\S+)\/console/.exec(stdout)?.[1];
            if (found !== undefined) resolve(found);
          });
          void exited.then(() => reject(new Error(`turnkit serve exited before serving: ${stdout}`)));
        });
        const api = async (path: string, body?: unknown): Promise<{ status: number; json: any }> => {
          const response = await fetch(`${base}/api${path}`, {
            method: body === undefined ? 'GET' : 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return { status: response.status, json: await response.json() };
        };
        const submitted = await api('/turns', { agent: 'approve', input: 'deploy over http' });
        expect(submitted.status).toBe(201);
        const id = String(submitted.json.id);
        let turn = await api(`/turns/${id}`);
        while (turn.json.status !== 'awaiting_approval') {
          await new Promise((resolve) => setTimeout(resolve, 20));
          turn = await api(`/turns/${id}`);
        }
        expect(turn.json.parked.map((p: { call: { id: string } }) => p.call.id)).toEqual(['d1']);
        expect((await api(`/turns/${id}/decisions`, { decisions: { nope: { type: 'approve' } } })).status).toBe(409);
        expect((await api(`/turns/${id}/decisions`, { decisions: { d1: { type: 'approve' } } })).json).toEqual({
          accepted: ['d1'],
          ignored: [],
        });
        const done = await until(client, id, 'stopped');
        expect(transcriptLines(done.transcript).at(-1)).toBe('assistant: deployed');
        expect((await api('/turns/no-such-turn')).status).toBe(404);
      } finally {
        serve.kill('SIGTERM');
        await exited;
      }
    }, 60_000);

    it('`turnkit ls`, `show --thread` and `approve` with `--dbos URL`: the store commands over the same turns', async () => {
      if (!existsSync(TURNKIT)) throw new Error(`${TURNKIT} is missing: build the CLI first with \`npx tsc -b\`.`);
      const turnkit = (args: readonly string[]) =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
          const child = spawn(process.execPath, [TURNKIT, ...args], { cwd: REPO, env: { ...process.env, NO_COLOR: '1' } });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString('utf8')));
          child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        });
      // A turn of a thread: `show --thread` shows the thread, and what its current turn waits for.
      const id = await client.submit({ agent: 'approve', input: 'deploy from the command line', thread: 'cli-thread' });
      await until(client, id, 'awaiting_approval');
      const shown = await turnkit(['show', '--thread', 'cli-thread', '--dbos', url]);
      expect(shown.code).toBe(3); // its current turn waits for approval
      expect(shown.stdout).toContain('thread cli-thread · agent approve · open');
      expect(shown.stdout).toContain(`turn ${id} · awaiting_approval`);
      expect(shown.stdout).toContain(`turnkit approve ${id} d1 --dbos ${url}`);
      const approved = await turnkit(['approve', id, 'd1', '--dbos', url]);
      expect(approved.stdout).toContain(`Approved d1 of turn ${id} (stored).`);
      expect(approved.code).toBe(0);
      await until(client, id, 'stopped');
      const listed = await turnkit(['ls', '--dbos', url, '--status', 'stopped']);
      expect(listed.stdout).toContain(`${id}  approve  stopped`);
      const both = await turnkit(['ls', '--dbos', url, '--store', 'memory://']);
      expect(both.code).toBe(2);
    }, 90_000);
  },
);

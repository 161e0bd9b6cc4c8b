// Turns on DBOS, one process, a real Postgres: a model call's retry waits on DBOS's durable timer,
// an approval past its deadline expires, a call another run of the workflow started is not run
// again, a turn of an unknown agent fails with the reason, the client refuses what the store's
// client refuses, with the same errors, and a thread runs one turn at a time (its next turn waits
// behind a parked one, or is refused when asked; closing it cancels what waits and ends its grants),
// and a turn of many agents parked on its child's call is decided (or cancelled) from another
// client of the same database.

import type { Model, ModelResponse } from '@turnkit/core';
import { defineTool } from '@turnkit/dispatch';
import type { AgentDefinition } from '@turnkit/store';
import { ThreadBusyError, ThreadClosedError, ThreadNotFoundError, TurnExistsError, type WatchEvent } from '@turnkit/store';
import { call, scriptedModel, text, toolCalls, transcriptLines } from '@turnkit/testing';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { z } from 'zod';
import { createDbosTurns, type DbosTurnsClient } from '../src/index.js';
import { dropDatabase, freshDatabase, POSTGRES_URL, WHY_SKIPPED } from './postgres.js';

async function ended(turns: DbosTurnsClient, id: string): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for await (const event of turns.watch(id, { pollMs: 20 })) events.push(event);
  return events;
}

/** Fails once with a retryable error, then answers. */
function flaky(): Model {
  let calls = 0;
  return {
    async generate(): Promise<ModelResponse> {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('the provider is busy'), { retryable: true });
      return { text: 'answered after a retry', toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
}

/** Runs of `effect`'s side effect. */
let effects = 0;
const effect = defineTool({
  name: 'effect',
  description: 'Has a side effect.',
  input: z.object({}),
  readOnly: true,
  execute: () => {
    effects += 1;
    return 'done';
  },
});

/** Set in beforeAll: the database the turns are in. */
let databaseUrl = '';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  approvalTimeoutMs: 300,
  execute: ({ service }) => `deployed ${service}`,
});

/** Runs of `publish`. */
let published = 0;
const publish = defineTool({
  name: 'publish',
  description: 'Publishes a page.',
  input: z.object({ title: z.string() }),
  needsApproval: true,
  execute: ({ title }) => {
    published += 1;
    return `published ${title}`;
  },
});

const release = defineTool({
  name: 'release',
  description: 'Releases a service.',
  input: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => `released ${service}`,
});

describe.skipIf(POSTGRES_URL === undefined)(
  `turns on DBOS${POSTGRES_URL === undefined ? ` (skipped: ${WHY_SKIPPED})` : ''}`,
  () => {
    const agents: Record<string, AgentDefinition> = {
      flaky: { model: flaky(), limits: { modelRetryBackoffMs: 50 } },
      deploy: { model: scriptedModel([toolCalls(call('deploy', { service: 'api' })), text('done')]), tools: [deploy] },
      plain: { model: scriptedModel([text('one'), text('two'), text('three')]) },
      threaded: {
        model: scriptedModel([
          toolCalls(call('release', { service: 'api' })),
          text('released api'),
          text('nothing more'),
          toolCalls(call('release', { service: 'db' })),
          text('released db'),
        ]),
        tools: [release],
      },
      closing: { model: scriptedModel([toolCalls(call('release', { service: 'web' }))]), tools: [release] },
      // Another run of the workflow (a second process driving the turn) records the call started
      // between this run's journal read and its tool: a hook that runs in between writes that row.
      raced: {
        model: scriptedModel([toolCalls(call('effect', {})), text('after the race')]),
        tools: [effect],
        hooks: {
          before: [
            {
              name: 'another run starts the call',
              async run(info) {
                const db = new pg.Client({ connectionString: databaseUrl });
                await db.connect();
                await db.query(
                  `INSERT INTO turnkit_dbos.calls (turn_id, call_id, name, started_at, owner) VALUES ($1, $2, $3, now(), 'another-run')`,
                  [info.turnId, info.call.id, info.call.name],
                );
                await db.end();
                return undefined;
              },
            },
          ],
        },
      },
      // A tree: the lead delegates to the editor, whose calls wait for a person (two turns: one decided, one cancelled).
      lead: {
        system: 'You lead.',
        model: scriptedModel([
          toolCalls(call('transfer_task', { agent: 'editor', task: 'Publish the bridge page.' })),
          text('The page is up.'),
          toolCalls(call('transfer_task', { agent: 'editor', task: 'Publish the tunnel pages.' })),
          toolCalls(call('transfer_task', { agent: 'editor', task: 'Publish the second bridge page.' })),
        ]),
        delegates: ['editor'],
      },
      editor: {
        description: 'Publishes pages.',
        system: 'You publish.',
        model: scriptedModel([
          toolCalls(call('publish', { title: 'Bridge' })),
          text('Published.'),
          toolCalls(call('publish', { title: 'Tunnel' })),
          toolCalls(call('publish', { title: 'Tunnel 2' })),
          text('Published both.'),
          toolCalls(call('publish', { title: 'Bridge 2' })),
        ]),
        tools: [publish],
      },
      lost: { model: scriptedModel([text('never')]), delegates: ['nobody'] },
    };
    let url: string;
    let turns: DbosTurnsClient;
    beforeAll(async () => {
      url = await freshDatabase('unit');
      databaseUrl = url;
      turns = await createDbosTurns({ databaseUrl: url, agents });
    }, 60_000);
    afterAll(async () => {
      await turns?.close();
      await dropDatabase(url);
    });

    it("a model call's retry waits on DBOS's durable timer, then the turn goes on", async () => {
      const id = await turns.submit({ agent: 'flaky', input: 'hello' });
      const events = await ended(turns, id);
      expect(events.at(-1)).toMatchObject({ type: 'status', status: 'stopped' });
      const steps = (await DBOS.listWorkflowSteps(id)) ?? [];
      const names = steps.map((s) => s.name);
      // The wait between the two model calls is a recorded DBOS timer (a recv on the cancel topic, with a timeout).
      const first = names.indexOf('turnkit.model');
      const second = names.lastIndexOf('turnkit.model');
      expect(second).toBeGreaterThan(first);
      expect(names.slice(first + 1, second)).toContain('DBOS.sleep');
      expect(transcriptLines((await turns.get(id))?.transcript ?? [])).toEqual([
        'user: hello',
        'assistant: answered after a retry',
      ]);
    });

    it('an approval nobody gives expires at its deadline, kept by DBOS', async () => {
      const id = await turns.submit({ agent: 'deploy', input: 'deploy the api' });
      await ended(turns, id);
      const turn = await turns.get(id);
      expect(turn?.status).toBe('stopped');
      expect(transcriptLines(turn?.transcript ?? [])).toEqual([
        'user: deploy the api',
        'assistant: [call_1 deploy]',
        expect.stringMatching(/^tool call_1 deploy: error .*expired/),
        'assistant: done',
      ]);
    });

    it('a call another run of the workflow started is not run again by this one (at most once, two drivers)', async () => {
      const id = await turns.submit({ agent: 'raced', input: 'go' });
      await ended(turns, id);
      const turn = await turns.get(id);
      expect(effects).toBe(0);
      expect(transcriptLines(turn?.transcript ?? [])).toEqual([
        'user: go',
        'assistant: [call_1 effect]',
        expect.stringMatching(/^tool call_1 effect: error .*another run of this turn .* started it/),
        'assistant: after the race',
      ]);
    });

    it('a turn of an agent no process has fails, saying which agents there are', async () => {
      const id = await turns.submit({ agent: 'nobody', input: 'hi' });
      const events = await ended(turns, id);
      expect(events.at(-1)).toMatchObject({ type: 'status', status: 'failed' });
      const turn = await turns.get(id);
      expect(turn?.error?.kind).toBe('unknown_agent');
      expect(turn?.error?.message).toContain("'flaky', 'deploy', 'plain', 'threaded', 'closing', 'raced'");
    });

    it("refuses what the store refuses, with the store's errors; list pages in submit order", async () => {
      const id = await turns.submit({ agent: 'plain', id: 'twice', input: 'a' });
      await expect(turns.submit({ agent: 'plain', id, input: 'b' })).rejects.toBeInstanceOf(TurnExistsError);
      await expect(turns.submit({ agent: 'plain', limits: { maxIterations: -1 } })).rejects.toBeInstanceOf(RangeError);
      await expect(turns.submit({ agent: '' })).rejects.toBeInstanceOf(TypeError);
      await expect(turns.list({ limit: 0 })).rejects.toBeInstanceOf(RangeError);
      await expect(turns.decide(id, {})).rejects.toBeInstanceOf(TypeError);
      await ended(turns, id);
      const first = await turns.list({ limit: 2 });
      expect(first.turns).toHaveLength(2);
      expect(first.cursor).not.toBeNull();
      const rest = await turns.list({ cursor: first.cursor });
      const all = [...first.turns, ...rest.turns].map((t) => t.id);
      expect(all.at(-1)).toBe('twice');
      expect(new Set(all).size).toBe(all.length);
      expect((await turns.list({ status: 'failed' })).turns.map((t) => t.agent)).toEqual(['nobody']);
    });

    it('a thread runs one turn at a time: the next waits behind a parked one (or is refused), and closing it cancels what waits and ends its grants', async () => {
      const thread = 'conversation-1';
      const first = await turns.submit({ agent: 'threaded', input: 'Release the api.', thread });
      for await (const e of turns.watch(first, { pollMs: 20 }))
        if (e.type === 'status' && e.status === 'awaiting_approval') break;
      const second = await turns.submit({ agent: 'threaded', input: 'Anything else?', thread });
      const refused = await turns.submit({ agent: 'threaded', input: 'Now!', thread, whenBusy: 'refuse' }).catch((e) => e);
      expect(refused).toBeInstanceOf(ThreadBusyError);
      expect(refused).toMatchObject({ threadId: thread, turnId: first, status: 'awaiting_approval' });
      await expect(turns.submit({ agent: 'plain', input: 'hi', thread })).rejects.toThrow(/belongs to agent 'threaded'/);
      const waiting = await turns.get({ thread });
      expect(waiting).toMatchObject({ status: 'open', current: first, agent: 'threaded' });
      expect(waiting?.turns.map((t) => [t.id, t.status])).toEqual([
        [first, 'awaiting_approval'],
        [second, 'ready'],
      ]);
      expect(waiting?.parked.map((p) => p.call.name)).toEqual(['release']);
      expect((await turns.get(second))?.transcript).toEqual([]); // it has not started

      await turns.decide(first, { call_1: { type: 'approve', remember: 'session' } });
      const seen: string[] = [];
      for await (const e of turns.watch({ thread }, { pollMs: 20 })) {
        if (e.type === 'status') seen.push(`${e.turnId === first ? 'first' : 'second'} ${e.status}`);
        if (e.turnId === second && e.type === 'status' && e.status === 'stopped') break;
      }
      // The turns ran in order: the second only once the first had ended.
      expect(seen.indexOf('first stopped')).toBeGreaterThanOrEqual(0);
      expect(seen.indexOf('first stopped')).toBeLessThan(seen.findIndex((e) => e.startsWith('second')));
      const done = await turns.get({ thread });
      expect(done?.grants).toEqual([{ scope: 'session' }]);
      expect(transcriptLines(done?.transcript ?? [])).toEqual([
        'user: Release the api.',
        'assistant: [call_1 release]',
        'tool call_1 release: ok "released api"',
        'assistant: released api',
        'user: Anything else?',
        'assistant: nothing more',
      ]);
      // The grant applies to the thread's next turn: the release runs unasked.
      const third = await turns.submit({ agent: 'threaded', input: 'Release the db.', thread });
      expect((await ended(turns, third)).at(-1)).toMatchObject({ status: 'stopped' });
      expect(transcriptLines((await turns.get(third))?.transcript ?? [])).toContainEqual(
        expect.stringMatching(/^tool call_\d+ release: ok "released db"$/),
      );

      // Its tool call was a DBOS step of its own (started before the batch's step), recording that the tool ran.
      const steps = ((await DBOS.listWorkflowSteps(third)) ?? []).filter((s) => s.name.startsWith('turnkit.tool'));
      expect(steps.map((s) => [s.name, s.output])).toEqual([
        ['turnkit.tool:release', { ran: true, threw: false }],
        ['turnkit.tools', expect.anything()],
      ]);

      // Closing: a turn waiting behind a parked one is cancelled with it, the grants end, no more turns.
      const other = 'conversation-2';
      const parked = await turns.submit({ agent: 'closing', input: 'Release the web.', thread: other });
      for await (const e of turns.watch(parked, { pollMs: 20 }))
        if (e.type === 'status' && e.status === 'awaiting_approval') break;
      const queued = await turns.submit({ agent: 'closing', input: 'And again.', thread: other });
      expect(await turns.closeThread(other, 'the customer left')).toBe(true);
      expect(await turns.closeThread(other)).toBe(false);
      await expect(turns.closeThread('no-such-thread')).rejects.toBeInstanceOf(ThreadNotFoundError);
      await expect(turns.submit({ agent: 'closing', input: 'More.', thread: other })).rejects.toBeInstanceOf(ThreadClosedError);
      const events: string[] = [];
      for await (const e of turns.watch({ thread: other }, { pollMs: 20 }))
        if (e.type === 'status') events.push(`${e.turnId === parked ? 'parked' : 'queued'} ${e.status}`);
      expect(events.slice(-2).sort()).toEqual(['parked cancelled', 'queued cancelled']);
      const closed = await turns.get({ thread: other });
      expect(closed).toMatchObject({ status: 'closed', closeReason: 'the customer left', grants: [], current: null });
      expect((await turns.get(queued))?.status).toBe('cancelled');
      expect((await turns.get(third))?.thread).toBe(thread);

      const page = await turns.listThreads({ limit: 1 });
      expect(page.threads.map((t) => [t.id, t.turns, t.status])).toEqual([[thread, 3, 'open']]);
      const rest = await turns.listThreads({ cursor: page.cursor });
      expect(rest.threads.map((t) => [t.id, t.turns, t.status])).toEqual([[other, 2, 'closed']]);
      await expect(turns.listThreads({ limit: 0 })).rejects.toBeInstanceOf(RangeError);
    });

    it("a tree parked on its child's call is decided from another client: the decision reaches the child, each tool runs once; a child's grant is its own; a cancel ends the whole tree", async () => {
      const other = await createDbosTurns({ databaseUrl: url });
      try {
        const id = await turns.submit({ agent: 'lead', input: 'Put the bridge page up.', id: 'tree' });
        const seen: WatchEvent[] = [];
        for await (const event of other.watch(id, { pollMs: 20 })) {
          seen.push(event);
          if (event.type === 'status' && event.status === 'awaiting_approval') break;
        }
        // The child's messages come with their child turn; the row waits for a person, naming whose call it is.
        const child = seen.flatMap((e) => (e.type === 'message' && e.child !== undefined ? [e.child] : []));
        expect(child[0]).toEqual({ turn: 'tree/call_1', agentPath: ['lead', 'editor'] });
        const parked = await other.get(id);
        expect(parked?.status).toBe('awaiting_approval');
        expect(parked?.parked.map((p) => [p.agentPath, p.call.id, p.call.name])).toEqual([
          [['lead', 'editor'], 'call_1', 'publish'],
        ]);
        expect((await other.list({ status: 'awaiting_approval' })).turns.map((t) => t.id)).toContain(id);

        // The child's own call id (the parent's transfer_task is call_1 too: they never mix).
        await other.decide(id, { call_1: { type: 'approve' } });
        await ended(other, id);
        const done = await other.get(id);
        expect(done?.status).toBe('stopped');
        expect(transcriptLines(done?.transcript ?? [])).toEqual([
          'user: Put the bridge page up.',
          'assistant: [call_1 transfer_task]',
          'tool call_1 transfer_task: ok "Published."',
          'assistant: The page is up.',
        ]);
        expect(done?.children?.map((c) => [c.id, c.agentPath, transcriptLines(c.transcript)])).toEqual([
          [
            'tree/call_1',
            ['lead', 'editor'],
            [
              'user: Publish the bridge page.',
              'assistant: [call_1 publish]',
              'tool call_1 publish: ok "published Bridge"',
              'assistant: Published.',
            ],
          ],
        ]);
        expect(done?.toolCalls.map((c) => `${c.turn ?? id} ${c.callId} ${c.name}`)).toEqual([
          'tree call_1 transfer_task',
          'tree/call_1 call_1 publish',
        ]);
        expect(done?.decisions.map((d) => [d.turn, d.callId, d.status])).toEqual([['tree/call_1', 'call_1', 'applied']]);
        expect(published).toBe(1);
        // The tree's usage is the turn's: 2 model calls of the lead, 2 of the editor.
        expect(done?.state?.usage.modelCalls).toBe(4);

        // A second tree: its first child's call is approved and remembered for the tool, so that
        // child's next call runs without asking; a second child (another transfer_task) asks again:
        // a child's grant is its own. A cancel from the other client then ends the whole tree.
        const second = await turns.submit({ agent: 'lead', input: 'Put the tunnel pages up.' });
        const parks = async (n: number): Promise<void> => {
          let seen = 0;
          for await (const event of other.watch(second, { pollMs: 20 }))
            if (event.type === 'status' && event.status === 'awaiting_approval' && ++seen === n) return;
        };
        await parks(1);
        expect((await other.get(second))?.parked.map((p) => [p.agentPath, p.call.id])).toEqual([[['lead', 'editor'], 'call_2']]);
        await other.decide(second, { call_2: { type: 'approve', remember: 'tool' } });
        await parks(2);
        const again = await other.get(second);
        expect(again?.parked.map((p) => [p.agentPath, p.call.id, p.call.input])).toEqual([
          [['lead', 'editor'], 'call_4', { title: 'Bridge 2' }],
        ]);
        expect(again?.decisions.map((d) => [d.turn, d.callId])).toEqual([[`${second}/call_2`, 'call_2']]);
        expect(await other.cancel(second, 'the launch moved')).toBe(true);
        await ended(other, second);
        const cancelled = await other.get(second);
        expect(cancelled?.status).toBe('cancelled');
        expect(transcriptLines(cancelled?.transcript ?? []).slice(-3)).toEqual([
          'tool call_2 transfer_task: ok "Published both."',
          'assistant: [call_3 transfer_task]',
          expect.stringMatching(/^tool call_3 transfer_task: error cancelled: the turn was cancelled/),
        ]);
        expect(cancelled?.children?.map((c) => [c.id, transcriptLines(c.transcript).slice(-2)])).toEqual([
          [`${second}/call_2`, ['tool call_3 publish: ok "published Tunnel 2"', 'assistant: Published both.']],
          [`${second}/call_3`, ['assistant: [call_4 publish]', expect.stringMatching(/^tool call_4 publish: error cancelled/)]],
        ]);
        expect(published).toBe(3);
      } finally {
        await other.close();
      }
    });

    it('a tree whose agent names an agent no process has fails, naming it', async () => {
      const id = await turns.submit({ agent: 'lost', input: 'hi' });
      await ended(turns, id);
      const turn = await turns.get(id);
      expect(turn?.status).toBe('failed');
      expect(turn?.error?.kind).toBe('invalid_agent');
      expect(turn?.error?.message).toContain(
        "names the agent 'nobody', which is not registered with the process that ran this turn",
      );
    });

    it('refuses options it cannot honour, and a second process-wide DBOS', async () => {
      await expect(createDbosTurns({ databaseUrl: 'memory://' })).rejects.toThrow(/postgres:\/\/ URL/);
      await expect(createDbosTurns({ databaseUrl: url, agents: { capped: { model: flaky(), maxRunning: 1 } } })).rejects.toThrow(
        /maxRunning/,
      );
      await expect(createDbosTurns({ databaseUrl: url, agents })).rejects.toThrow(/one per process/);
      await expect(createDbosTurns({ databaseUrl: url, schema: 'Bad-Name' })).rejects.toBeInstanceOf(TypeError);
    });
  },
);

// The multi-agent conformance corpus through stored turns (PGlite in memory, in this process): the
// whole tree runs in its turn's row, a child's parked call is decided with `store.decide`, and the
// corpus runs again with the turn handed to a fresh worker after every effect of the tree; a child's
// and a root-level handoff agent's dispatcher budget holds across activations.

import fc from 'fast-check';
import { errorMessage } from '@turnkit/core/internal';
import { defineTool } from '@turnkit/dispatch';
import { createWorker, openStore, type AgentDefinition, type Store, type WatchEvent } from '@turnkit/store';
import { agentScenarios, call, fail, scriptedModel, text, toolCalls, type ScriptStep } from '@turnkit/testing';
import { runAgentScenario } from '@turnkit/testing/internal';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeAgents } from './store-agents.js';

let store: Store;
beforeAll(async () => {
  store = await openStore('memory://');
});
afterAll(async () => {
  await store?.close();
});

const corpus = agentScenarios.map((s) => [s.name, s] as const);
/** The scenarios whose boundaries differ from a turn of one agent's: inside a child turn, a child parked, a handoff. */
const TREE_BOUNDARIES = new Set(['delegate, then hand off', "a parent suspended on a child's parked call"]);

describe('multi-agent conformance: store (PGlite)', () => {
  it.each(corpus)('%s', async (_name, scenario) => {
    const { run, resume } = storeAgents(store);
    await runAgentScenario(scenario, run, resume);
  });
});

/** Past this many effects a scenario is not a conformance scenario any more: something loops. */
const MAX_EFFECTS = 120;

describe('multi-agent conformance: store (PGlite), handed to a fresh worker after every effect of the tree', () => {
  it.each(corpus.filter(([name]) => TREE_BOUNDARIES.has(name)))('%s', async (_name, scenario) => {
    let k = 1;
    for (; k <= MAX_EFFECTS; k += 1) {
      const interpreter = storeAgents(store, { handBackAfter: k });
      try {
        await runAgentScenario(scenario, interpreter.run, interpreter.resume);
      } catch (error) {
        throw new Error(`handed back after effect ${k}: ${errorMessage(error)}`);
      }
      if (!interpreter.handedBack()) break;
    }
    expect(k).toBeGreaterThan(1);
    expect(k).toBeLessThanOrEqual(MAX_EFFECTS);
  });
});

describe('a stored tree of agents', () => {
  /** A supervisor that delegates twice to a researcher whose tools need approval. */
  function tree(researcher: Parameters<typeof scriptedModel>[0]) {
    const ran: string[] = [];
    const tool = (name: string) =>
      defineTool({
        name,
        description: `${name}s a page.`,
        input: z.object({ title: z.string() }),
        needsApproval: true,
        execute: ({ title }) => {
          ran.push(`${name} ${title}`);
          return `${name}ed ${title}`;
        },
      });
    const delegate = (task: string) => toolCalls(call('transfer_task', { agent: 'researcher', task }));
    const agents: Record<string, AgentDefinition> = {
      supervisor: {
        model: scriptedModel([delegate('First.'), delegate('Second.'), text('Both done.')]),
        system: 'You lead.',
        delegates: ['researcher'],
      },
      researcher: {
        description: 'Publishes pages.',
        system: 'You publish.',
        model: scriptedModel(researcher),
        tools: [tool('publish'), tool('note')],
        limits: { modelRetryBackoffMs: 1 },
      },
    };
    return { agents, ran };
  }

  it("parks in the child holding no worker, shows the path, takes the child's decision, and keeps a child's remembered grant to that child", async () => {
    const { agents, ran } = tree([
      toolCalls(call('publish', { title: 'A' })),
      // A retry the worker parks in the database: the rest of the child runs in a new activation.
      fail(Object.assign(new Error('provider busy'), { retryable: true })),
      toolCalls(call('note', { title: 'B' })),
      text('First done.'),
      toolCalls(call('publish', { title: 'C' })),
      text('Second done.'),
    ]);
    // A turn of a thread: the thread is the session of its turns' grants, but not of a child's.
    const id = await store.submit({ agent: 'supervisor', input: 'Publish.', thread: 'tree-thread' });
    const worker = () => createWorker({ store, agents, turnIds: [id], leaseMs: 2000 }).runUntilIdle();
    await worker();
    let turn = await store.get(id);
    // Parked in the child: the row waits for a person and no worker holds or can claim it.
    expect(turn?.status).toBe('awaiting_approval');
    expect(turn?.state?.status).toBe('delegating');
    expect(await store.claim({ owner: 'probe', leaseMs: 1000, turnIds: [id] })).toBeNull();
    expect(turn?.parked.map((p) => [p.call.id, p.call.name, p.agentPath])).toEqual([
      ['call_1', 'publish', ['supervisor', 'researcher']],
    ]);
    expect(turn?.children?.map((c) => [c.id, c.agentPath, c.transcript.length])).toEqual([
      [`${id}/call_1`, ['supervisor', 'researcher'], 2],
    ]);
    // The child's call_1, not the parent's transfer_task call_1; remembered for the child's session.
    await store.decide(id, { call_1: { type: 'approve', remember: 'session' } });
    await worker();
    turn = await store.get(id);
    // The grant held in the child after the retry's new activation (note ran unasked), and not in the next child turn.
    expect(ran).toEqual(['publish A', 'note B']);
    expect(turn?.status).toBe('awaiting_approval');
    expect(turn?.parked.map((p) => [p.call.name, p.agentPath])).toEqual([['publish', ['supervisor', 'researcher']]]);
    expect(turn?.decisions.map((d) => [d.callId, d.turn, d.status])).toEqual([['call_1', `${id}/call_1`, 'applied']]);
    // The scripted model numbers its calls over both child turns: the second child's publish is call_3.
    await store.decide(id, { call_3: { type: 'approve' } });
    await worker();
    turn = await store.get(id);
    expect(turn?.status).toBe('stopped');
    expect(ran).toEqual(['publish A', 'note B', 'publish C']);
    expect(turn?.transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'Both done.' });
    // The journal names each child call's turn; the parent's transcript has only its own calls.
    expect(turn?.toolCalls.filter((c) => c.turn !== undefined).map((c) => [c.turn, c.callId, c.name])).toEqual([
      [`${id}/call_1`, 'call_1', 'publish'],
      [`${id}/call_1`, 'call_2', 'note'],
      [`${id}/call_2`, 'call_3', 'publish'],
    ]);
    expect(turn?.children?.map((c) => c.id)).toEqual([`${id}/call_1`, `${id}/call_2`]);
    // The child's "always" stayed the child's: the thread (and so its next turns) remembers nothing.
    expect((await store.get({ thread: 'tree-thread' }))?.grants).toEqual([]);
    expect(turn?.children?.[1]?.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // watch gives the child's messages with the child turn and its agent path.
    const events: WatchEvent[] = [];
    for await (const event of store.watch(id)) events.push(event);
    const childMessages = events.filter((e) => e.type === 'message' && e.child !== undefined);
    expect(childMessages).toHaveLength(turn?.children?.reduce((n, c) => n + c.transcript.length, 0) ?? -1);
    expect(childMessages[0]).toMatchObject({ child: { turn: `${id}/call_1`, agentPath: ['supervisor', 'researcher'] } });
    expect(events.filter((e) => e.type === 'message' && e.child === undefined)).toHaveLength(turn?.transcript.length ?? -1);
  });

  it('a cancel of the parent while its child is parked ends the tree, every open call with a result', async () => {
    const { agents, ran } = tree([toolCalls(call('publish', { title: 'A' }))]);
    const id = await store.submit({ agent: 'supervisor', input: 'Publish.' });
    await createWorker({ store, agents, turnIds: [id], leaseMs: 2000 }).runUntilIdle();
    expect((await store.get(id))?.status).toBe('awaiting_approval');
    await store.cancel(id, 'the user left');
    await createWorker({ store, agents, turnIds: [id], leaseMs: 2000 }).runUntilIdle();
    const turn = await store.get(id);
    expect(turn?.status).toBe('cancelled');
    expect(ran).toEqual([]);
    expect(turn?.transcript.at(-1)).toMatchObject({
      role: 'tool',
      result: { callId: 'call_1', name: 'transfer_task', isError: true },
    });
    expect(turn?.children?.[0]?.transcript.at(-1)).toMatchObject({
      role: 'tool',
      result: { callId: 'call_1', name: 'publish', isError: true },
    });
  });

  it('an agent that names an agent the worker does not have fails the turn, naming it', async () => {
    const id = await store.submit({ agent: 'lead', input: 'Go.' });
    await createWorker({
      store,
      agents: { lead: { model: scriptedModel([text('never')]), delegates: ['ghost'] } },
      turnIds: [id],
    }).runUntilIdle();
    const turn = await store.get(id);
    expect(turn?.status).toBe('failed');
    expect(turn?.error?.message).toMatch(/names the agent 'ghost', which is not registered with this worker/);
    // A delegate's bad `models` fails the turn before it starts too, naming that agent.
    const bad = await store.submit({ agent: 'lead', input: 'Go.' });
    await createWorker({
      store,
      agents: {
        lead: { model: scriptedModel([text('never')]), delegates: ['helper'] },
        helper: { model: scriptedModel([]), description: 'Helps.', models: [''] },
      },
      turnIds: [bad],
    }).runUntilIdle();
    const failed = await store.get(bad);
    expect(failed?.error).toMatchObject({ kind: 'invalid_agent' });
    expect(failed?.error?.message).toMatch(/agent 'helper' option `models` must be an array of model ids/);
  });
});

/**
 * A supervisor that delegates once to a researcher with a budget of `limit` `fetch` calls (or,
 * `handoff`, hands the turn off to it); the researcher calls `fetch` once per reply, and a
 * `publish` that waits for a person after the replies in `parkAfter` (so the tree parks there: in
 * the child, or at the root with the researcher acting).
 */
function budgetTree(limit: number, fetches: number, parkAfter: ReadonlySet<number>, handoff = false) {
  const ran: string[] = [];
  const fetchTool = defineTool({
    name: 'fetch',
    description: 'Fetches a page.',
    readOnly: true,
    input: z.object({ n: z.number() }),
    execute: ({ n }) => {
      ran.push(`fetch ${n}`);
      return `page ${n}`;
    },
  });
  const publish = defineTool({
    name: 'publish',
    description: 'Publishes.',
    input: z.object({ n: z.number() }),
    needsApproval: true,
    execute: ({ n }) => {
      ran.push(`publish ${n}`);
      return 'published';
    },
  });
  const replies: ScriptStep[] = [];
  for (let n = 1; n <= fetches; n++) {
    replies.push(toolCalls(call('fetch', { n })));
    if (parkAfter.has(n)) replies.push(toolCalls(call('publish', { n })));
  }
  replies.push(text('Done.'));
  const agents: Record<string, AgentDefinition> = {
    supervisor: handoff
      ? { model: scriptedModel([toolCalls(call('handoff', { agent: 'researcher' }))]), handoffs: ['researcher'] }
      : {
          model: scriptedModel([toolCalls(call('transfer_task', { agent: 'researcher', task: 'Fetch.' })), text('All done.')]),
          delegates: ['researcher'],
        },
    researcher: {
      description: 'Fetches pages.',
      model: scriptedModel(replies),
      tools: [fetchTool, publish],
      budget: { perTool: { fetch: limit } },
      limits: { maxIterations: 2 * fetches + 2 },
    },
  };
  return { agents, ran };
}

/** Runs the tree to its end, each activation by a fresh worker, approving each parked call; returns how many times it parked. */
async function approveToEnd(id: string, agents: Record<string, AgentDefinition>): Promise<number> {
  let parks = 0;
  for (;;) {
    await createWorker({ store, agents, turnIds: [id], leaseMs: 2000 }).runUntilIdle();
    const turn = await store.get(id);
    if (turn?.status !== 'awaiting_approval') return parks;
    parks++;
    await store.decide(id, Object.fromEntries(turn.parked.map((p) => [p.call.id, { type: 'approve' as const }])));
  }
}

describe("a tree's agent's dispatcher budget across activations (PGlite)", () => {
  it('parked in the child mid-way and resumed by another worker, the child runs `fetch` no more than its budget', async () => {
    // Budget 2; the child fetches once, parks, and asks for three more fetches after the decision.
    const { agents, ran } = budgetTree(2, 4, new Set([1]));
    const id = await store.submit({ agent: 'supervisor', input: 'Go.' });
    expect(await approveToEnd(id, agents)).toBe(1);
    expect(ran).toEqual(['fetch 1', 'publish 1', 'fetch 2']);
    const turn = await store.get(id);
    expect(turn?.status).toBe('stopped');
    // The calls past the budget have the dispatcher's budget error, in the child's transcript.
    const child = turn?.children?.[0]?.transcript ?? [];
    const refused = child.flatMap((m) => (m.role === 'tool' && m.result.isError ? [m.result] : []));
    expect(refused.map((r) => [r.name, r.errorKind])).toEqual([
      ['fetch', 'budget'],
      ['fetch', 'budget'],
    ]);
    expect(String(refused[0]?.output)).toMatch(/budget\.perTool\.fetch = 2/);
  });

  it('handed off to at the root, parked mid-way and resumed by another worker, the agent runs `fetch` no more than its budget', async () => {
    // Budget 2; the supervisor hands off, the researcher fetches once, parks, and asks for three more fetches after the decision.
    const { agents, ran } = budgetTree(2, 4, new Set([1]), true);
    const id = await store.submit({ agent: 'supervisor', input: 'Go.' });
    expect(await approveToEnd(id, agents)).toBe(1);
    expect(ran).toEqual(['fetch 1', 'publish 1', 'fetch 2']);
    const turn = await store.get(id);
    expect(turn?.status).toBe('stopped');
    const refused = (turn?.transcript ?? []).flatMap((m) => (m.role === 'tool' && m.result.isError ? [m.result] : []));
    expect(refused.map((r) => [r.name, r.errorKind])).toEqual([
      ['fetch', 'budget'],
      ['fetch', 'budget'],
    ]);
    // The researcher's counts are kept under the root turn's own id: no child turn.
    expect(turn?.children).toBeUndefined();
  });

  it('any budget, any number of fetches, parked after any of them, in a child, handed off to at the root, or as the root: never more than the budget runs (fast-check, numRuns 12, seed 41)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 5 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }),
        fc.constantFrom('child', 'handoff', 'root'),
        async (limit, fetches, parks, where) => {
          const parkAfter = new Set(parks.filter((n) => n <= fetches));
          const { agents, ran } = budgetTree(limit, fetches, parkAfter, where === 'handoff');
          // The researcher as a child turn (its counts in the child's log entries), handed off to at
          // the root (in log entries under the root turn's id), or as a turn of its own (in the row).
          const id = await store.submit({ agent: where === 'root' ? 'researcher' : 'supervisor', input: 'Go.' });
          expect(await approveToEnd(id, agents)).toBe(parkAfter.size);
          expect(ran.filter((r) => r.startsWith('fetch'))).toHaveLength(Math.min(limit, fetches));
          expect((await store.get(id))?.status).toBe('stopped');
        },
      ),
      { numRuns: 12, seed: 41 },
    );
  });
});

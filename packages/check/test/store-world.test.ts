// One run at a time through the protocol's model world: a retry parked in the database and a cancel
// that ends a parked turn, each step checked against the rows it leaves.

import { STORE_CHECKS } from '@turnkit/check/internal';
import type { World } from '../src/store/types.ts';
import { actions, initialWorld } from '../src/store/world.ts';
import { protocol, type Protocol, type ProtocolEffect, type ProtocolEvent } from '@turnkit/store/internal';
import { describe, expect, it } from 'vitest';
import { runsCall, STRAIGHT_RUN, walk } from './store-walk.ts';

function configWith(what: 'retries' | 'cancels') {
  const config = STORE_CHECKS.find((s) => (s.config[what] ?? 0) > 0)?.config;
  if (config === undefined) throw new Error(`no exploration with ${what}`);
  return config;
}

describe("the world's retry: the protocol parks the turn in the database until its retry is due", () => {
  it('claim, a failed model call, the retry falling due, and a new claim with the next token', () => {
    const config = configWith('retries');
    let world = walk(config, initialWorld(config), [
      'w0 claims t1',
      "w0's model call fails: t1 waits for its retry in the database",
    ]);
    expect(world.rows[0]).toMatchObject({ token: 1, owner: null, retry: 'waiting', runnable: true, status: 'ready', version: 1 });
    expect(world.workers).toEqual([null, null]);
    // Not claimable before it is due.
    expect(() => walk(config, world, ['w1 claims t1'])).toThrow(/'w1 claims t1' is not enabled/);
    world = walk(config, world, ["t1's retry falls due", 'w1 claims t1']);
    expect(world.rows[0]).toMatchObject({ token: 2, owner: 1, retry: 'none' });
    expect(world.retriesLeft).toBe(0);
  });
});

describe("the world's cancel: taken first, it ends the turn and closes a decision that came with it as ignored", () => {
  it('a parked turn approved and cancelled: the next worker takes the cancel, the decision is ignored', () => {
    const config = configWith('cancels');
    const world = walk(config, initialWorld(config), [
      'w0 claims t1',
      "w0 reads t1's inbox for a cancel",
      ...runsCall('w0', 'plain', 'dispatching'),
      'w0 commits t1 awaiting_approval at token 1',
      "w0 reads t1's inbox",
      'w0 commits t1 awaiting_approval at token 1 and releases it',
      'w0 lets t1 go',
      'user approves t1/parked',
      'user cancels t1',
      'w1 claims t1',
      "w1 reads t1's inbox for a cancel",
      'w1 commits t1 done at token 2',
    ]);
    expect(world.rows[0]).toMatchObject({ status: 'done', owner: null, runnable: false });
    expect(world.inbox.map((e) => [e.id, e.status, e.timesApplied])).toEqual([
      ['0/cancel', 'applied', 1],
      ['0/parked', 'ignored', 0],
    ]);
    expect(world.ghost.ran).toEqual([[1, 0]]);
  });
});

describe("the world's boundary after a batch: a derivable write the protocol skips", () => {
  it("after the approved call's result, the protocol is asked for the boundary, answers skip_write, and the next commit is the end", () => {
    const config = STORE_CHECKS[0]?.config;
    if (config === undefined) throw new Error('no exploration');
    const seen: { event: ProtocolEvent; effects: ProtocolEffect[] }[] = [];
    const recording: Protocol = {
      ...protocol,
      step: (hold, event) => {
        const [next, effects] = protocol.step(hold, event);
        seen.push({ event, effects });
        return [next, effects];
      },
    };
    let world: World = initialWorld(config);
    for (const label of STRAIGHT_RUN) {
      seen.length = 0;
      const found = actions(config, world, recording).find((a) => a.label === label);
      if (found === undefined) throw new Error(`'${label}' is not enabled`);
      world = found.next;
      if (label === 'w0 journals the result for t1/parked') {
        // The result lands; core's boundary comes next, derivable, and nothing rides on it.
        const writes = seen.filter((s) => s.event.type === 'write');
        expect(writes.map((s) => [s.event, s.effects.map((e) => e.type)])).toEqual([
          [{ type: 'write', terminal: false, release: false, derivable: true }, ['skip_write']],
          [{ type: 'write', terminal: true, release: true }, ['commit']],
        ]);
      }
    }
    expect(world.rows[0]).toMatchObject({ status: 'done', runnable: false });
  });
});

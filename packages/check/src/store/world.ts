// A small model world for checking the protocol: the database rows (turns with their lease and
// fencing token, the tool journal, the inbox), N workers that each run the real protocol
// function through a model driver, a user who decides parked calls, a clock that lets leases
// expire, and process deaths. Everything is plain JSON; each action below is one atomic step
// (one statement or one local step of a worker), so the exploration sees every interleaving.
// The database operations do what @turnkit/store's statements do (its sql/: claim.ts, renew.ts,
// commit.ts, decide.ts, cancel.ts, the journal's).

import { openHold, type Protocol } from '@turnkit/store/internal';
import { endLease, feed, perform, settle, wrote } from './model-driver.js';
import type { Action, HoldModel, InboxEntry, Op, TurnRow, World, WorldConfig } from './types.js';

export function initialWorld(config: WorldConfig): World {
  return {
    rows: config.turns.map((t) => ({
      submitted: t.submitWhileParked === undefined,
      token: 0,
      owner: null,
      live: false,
      version: 0,
      status: 'ready',
      runnable: t.submitWhileParked === undefined,
      retry: 'none',
    })),
    journal: config.turns.map((t) => t.calls.map(() => ({ started: null, result: null }))),
    inbox: [],
    workers: Array.from({ length: config.workers }, () => null),
    deathsLeft: config.deaths,
    pausesLeft: config.pauses,
    retriesLeft: config.retries ?? 0,
    cancelsLeft: config.cancels ?? 0,
    ghost: { ran: config.turns.map((t) => t.calls.map(() => 0)), writers: [], ended: config.turns.map(() => []) },
  };
}

/** Every action enabled in `world`, each with the world after it. */
export function actions(config: WorldConfig, world: World, protocol: Protocol): Action[] {
  const out: Action[] = [];
  const add = (label: string, change: (w: World) => void): void => {
    const next = structuredClone(world);
    change(next);
    out.push({ label, next });
  };
  world.workers.forEach((held, w) => {
    if (held === null) {
      const turn = claimTarget(config, world, protocol);
      if (turn !== null) add(`w${w} claims ${config.turns[turn]?.id}`, (next) => claim(config, next, w, turn, protocol));
    } else if (held.ops.length > 0) {
      add(`w${w} ${describeOp(config, held)}`, (next) => perform(config, next, w, protocol));
      if (world.retriesLeft > 0 && justCalledModel(held))
        add(`w${w}'s model call fails: ${config.turns[held.turn]?.id} waits for its retry in the database`, (next) =>
          failModelCall(config, next, w, protocol),
        );
      if (!held.hold.lost && needsRenewal(world, held)) add(`w${w} renews`, (next) => renew(config, next, w, protocol));
    }
    if (world.deathsLeft > 0) add(`w${w} dies`, (next) => die(next, w));
  });
  world.rows.forEach((row, t) => {
    const id = config.turns[t]?.id;
    if (!row.submitted) {
      if (submittable(config, world, t)) add(`user submits ${id}`, (next) => submit(next, t));
      return;
    }
    if (row.owner !== null && row.live) {
      const holder = world.workers.some((h) => h !== null && h.turn === t && h.hold.token === row.token);
      if (!holder) add(`${id}'s lease expires`, (next) => expire(next, t));
      else if (world.pausesLeft > 0) add(`${id}'s lease expires under a paused worker`, (next) => pauseExpire(next, t));
    }
    if (row.retry === 'waiting') add(`${id}'s retry falls due`, (next) => void ((next.rows[t] as TurnRow).retry = 'due'));
    if (row.status !== 'done' && world.cancelsLeft > 0 && !world.inbox.some((e) => e.turn === t && e.kind === 'cancel'))
      add(`user cancels ${id}`, (next) => cancel(next, t));
    if (row.status !== 'awaiting_approval') return;
    for (const call of config.turns[t]?.calls ?? []) {
      if (call.parked && !world.inbox.some((e) => e.turn === t && e.kind === 'decision' && e.call === call.id))
        add(`user approves ${id}/${call.id}`, (next) => decide(next, t, call.id));
    }
  });
  return out;
}

/** The world is done when every turn has ended. */
export function allDone(world: World): boolean {
  return world.rows.every((r) => r.status === 'done');
}

/** A turn submitted by the user: while the turn it names is parked for approval, or once that one has ended. */
function submittable(config: WorldConfig, world: World, t: number): boolean {
  const after = config.turns.findIndex((spec) => spec.id === config.turns[t]?.submitWhileParked);
  const status = world.rows[after]?.status;
  return status === 'awaiting_approval' || status === 'done';
}

/** `store.submit`: the turn's row is inserted, runnable (after every row already there: its place in line). */
function submit(world: World, t: number): void {
  const row = world.rows[t] as TurnRow;
  row.submitted = true;
  row.runnable = true;
}

/** Whether an earlier turn of the turn's thread is open (submitted, not ended): what the claim statement's thread rule reads. */
function threadBusy(config: WorldConfig, world: World, t: number): boolean | undefined {
  const thread = config.turns[t]?.thread;
  if (thread === undefined) return undefined;
  return config.turns.some(
    (spec, e) => e < t && spec.thread === thread && world.rows[e]?.submitted && world.rows[e]?.status !== 'done',
  );
}

/** The first turn (in submission order) the claim statement would take, by the protocol's predicate. */
function claimTarget(config: WorldConfig, world: World, protocol: Protocol): number | null {
  if (protocol.claimLimit({ held: 0, concurrency: 1, stopping: false }) < 1) return null;
  // The model clock: now is 1; a live lease or a waiting retry ends at 2, an expired or due one ended at 1.
  const index = world.rows.findIndex((r, t) => {
    if (!r.submitted) return false;
    const busy = threadBusy(config, world, t);
    return protocol.claimable(
      {
        runnable: r.runnable,
        leaseExpiresAt: r.owner === null ? null : r.live ? 2 : 1,
        runAfter: r.retry === 'none' ? null : r.retry === 'waiting' ? 2 : 1,
        ...(busy === undefined ? {} : { threadBusy: busy }),
      },
      1,
    );
  });
  return index < 0 ? null : index;
}

/** The claim statement: bumps the token, sets the lease; the driver starts from the stored status. */
function claim(config: WorldConfig, world: World, w: number, turn: number, protocol: Protocol): void {
  const row = world.rows[turn] as TurnRow;
  row.token += 1;
  row.owner = w;
  row.live = true;
  row.retry = 'none';
  wrote(world, turn, row.token, w);
  const ops: Op[] =
    row.status === 'ready'
      ? [{ op: 'model_call' }]
      : row.status === 'awaiting_approval'
        ? [{ op: 'read_inbox', parked: true }]
        : [{ op: 'read_journal' }];
  // The drive starts by taking a waiting cancel. Without cancels in the world that read finds
  // nothing and changes nothing, so it is left out (fewer interleavings, the same worlds).
  if ((config.cancels ?? 0) > 0) ops.unshift({ op: 'read_inbox', parked: false });
  world.workers[w] = {
    turn,
    hold: openHold(config.turns[turn]?.id ?? '', row.token),
    version: row.version,
    phase: row.status,
    stored: row.status,
    ops,
  };
  settle(config, world, w, protocol);
}

/** The worker has just had the turn's first model reply (its `dispatching` state deferred, the batch's journal read next). */
function justCalledModel(held: HoldModel): boolean {
  return held.stored === 'ready' && held.phase === 'dispatching' && held.hold.deferred && held.ops[0]?.op === 'read_journal';
}

/** The model call failed and is to be retried after a wait: the protocol parks the turn in the database. */
function failModelCall(config: WorldConfig, world: World, w: number, protocol: Protocol): void {
  const held = world.workers[w] as HoldModel;
  world.retriesLeft -= 1;
  held.phase = 'ready';
  held.ops = [];
  feed(config, held, protocol, { type: 'lost', reason: 'retry' });
  perform(config, world, w, protocol);
}

function die(world: World, w: number): void {
  world.deathsLeft -= 1;
  world.workers[w] = null;
}

function expire(world: World, turn: number): void {
  const row = world.rows[turn] as TurnRow;
  row.live = false;
  endLease(world, turn, row.token);
}

function pauseExpire(world: World, turn: number): void {
  world.pausesLeft -= 1;
  expire(world, turn);
}

function decide(world: World, turn: number, call: string): void {
  insert(world, { id: `${turn}/${call}`, turn, kind: 'decision', call, status: 'pending', timesApplied: 0 });
}

/** `store.cancel`: a cancel row (one per turn) for a turn that has not ended. */
function cancel(world: World, turn: number): void {
  world.cancelsLeft -= 1;
  insert(world, { id: `${turn}/cancel`, turn, kind: 'cancel', call: null, status: 'pending', timesApplied: 0 });
}

/** Inserts an inbox row (kept sorted by id) and marks the turn runnable, as the store's decide.ts and cancel.ts do. */
function insert(world: World, entry: InboxEntry): void {
  world.inbox = [...world.inbox, entry].sort((a, b) => a.id.localeCompare(b.id));
  (world.rows[entry.turn] as TurnRow).runnable = true;
}

/** A renewal matters once the lease expired (it renews it) or the token moved (it is refused). */
function needsRenewal(world: World, held: HoldModel): boolean {
  const row = world.rows[held.turn] as TurnRow;
  return row.token !== held.hold.token || !row.live;
}

/**
 * The renewal statement (the store's renew.ts): fenced on the token. The store's statement also
 * refuses a released row (no owner), because its claim reads only the lease's expiry; here a row
 * without an owner is free whatever `live` says, so the model needs no such check.
 */
function renew(config: WorldConfig, world: World, w: number, protocol: Protocol): void {
  const held = world.workers[w] as HoldModel;
  const row = world.rows[held.turn] as TurnRow;
  if (row.token === held.hold.token) row.live = true;
  else feed(config, held, protocol, { type: 'lost', reason: 'fenced_out' });
  settle(config, world, w, protocol);
}

function describeOp(config: WorldConfig, held: HoldModel): string {
  const op = held.ops[0] as Op;
  const turn = config.turns[held.turn]?.id;
  switch (op.op) {
    case 'commit':
      return `commits ${turn} ${held.phase}${op.token === null ? ' unfenced' : ` at token ${op.token}`}${op.release && held.phase !== 'done' ? ' and releases it' : ''}${op.start === undefined ? '' : ` with the start of ${turn}/${op.start}`}`;
    case 'read_journal':
      return `reads ${turn}'s journal`;
    case 'read_inbox':
      return `reads ${turn}'s inbox${op.parked ? '' : ' for a cancel'}`;
    case 'journal_start':
      return `journals the start of ${turn}/${op.call}`;
    case 'run_tool':
      return `runs ${turn}/${op.call}'s tool`;
    case 'write_result':
      return `journals ${op.interrupted ? 'interrupted' : 'the result'} for ${turn}/${op.call}`;
    case 'depart':
      return `lets ${turn} go`;
    default:
      return `${op.op.replace('_', ' ')} ${turn}`;
  }
}

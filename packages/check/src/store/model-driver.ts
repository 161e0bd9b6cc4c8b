// The model driver: what the worker's driver does with each protocol effect, performed on the
// model world's rows. Each `perform` is one atomic step of one worker: one statement (the same
// conditions as @turnkit/store's statements: fenced on the token, compare-and-swap on the version, a
// journaled result kept) or one local step of the turn (core's decision, abstracted to the batch).

import { journalNeedsRead, type Protocol, type ProtocolEffect, type ProtocolEvent } from '@turnkit/store/internal';
import type { HoldModel, Op, TurnRow, World, WorldConfig } from './types.js';

/** Records a write that landed for `turn` at `token` by `worker` (for the one-writer invariant). */
export function wrote(world: World, turn: number, token: number, worker: number): void {
  const entry = `${turn}:${token}:${worker}`;
  if (!world.ghost.writers.includes(entry)) world.ghost.writers = [...world.ghost.writers, entry].sort();
}

/** Records that the lease of `turn` under `token` ended (expired or given back). */
export function endLease(world: World, turn: number, token: number): void {
  const ended = world.ghost.ended[turn] as number[];
  if (!ended.includes(token)) world.ghost.ended[turn] = [...ended, token].sort((a, b) => a - b);
}

/** Feeds an event to the protocol and queues what its effects ask for, ahead of the worker's other steps. */
export function feed(config: WorldConfig, held: HoldModel, protocol: Protocol, event: ProtocolEvent): void {
  const [hold, effects] = protocol.step(held.hold, event);
  held.hold = hold;
  const queued: Op[] = [];
  for (const effect of effects) {
    if (effect.type === 'stop') {
      // The work stops; a tool already running still has its side effect (nothing of it is written).
      held.ops = [...held.ops.filter((o) => o.op === 'run_tool'), { op: 'depart' }];
      return;
    }
    queued.push(...opsFor(config, held, effect));
  }
  held.ops = [...queued, ...held.ops];
}

function opsFor(config: WorldConfig, held: HoldModel, effect: ProtocolEffect): Op[] {
  switch (effect.type) {
    case 'apply_decisions':
      // Core: the decisions move the turn to running the approved calls (persisted first: core's `dispatching` checkpoint).
      held.phase = 'executing_approved';
      return [{ op: 'write', terminal: false, release: false, batch: true }, { op: 'read_journal' }];
    case 'write_interrupted':
      return [{ op: 'write_result', call: effect.callId, token: effect.token, interrupted: true }];
    case 'run_call': {
      // In the first round the dispatcher's policy parks a parked call instead of running it.
      const parked = config.turns[held.turn]?.calls.find((c) => c.id === effect.callId)?.parked === true;
      return held.phase === 'dispatching' && parked ? [] : [{ op: 'start', call: effect.callId }];
    }
    case 'journal_start':
      return [{ op: 'journal_start', call: effect.callId, token: effect.token }];
    case 'run_tool':
      return [{ op: 'run_tool', call: effect.callId }];
    case 'write_result':
      return [{ op: 'write_result', call: effect.callId, token: effect.token, interrupted: false }];
    case 'commit':
      return [{ op: 'commit', token: effect.token, applied: effect.applied, release: effect.release }];
    case 'commit_with_start':
      return [{ op: 'commit', token: effect.token, applied: effect.applied, release: false, start: effect.callId }];
    case 'write_deferred':
      return [{ op: 'commit', token: effect.token, applied: effect.applied, release: false }];
    default:
      // use_result, take_cancel, skip_write, defer_write: nothing to perform; stop, park_retry, release, depart: handled where they arise.
      return [];
  }
}

const fencedOut: ProtocolEvent = { type: 'lost', reason: 'fenced_out' };

/** Steps of the driver that touch neither the database nor a tool: they run at once after the step before them. */
const LOCAL: ReadonlySet<Op['op']> = new Set(['model_call', 'write', 'start', 'after_batch']);

/**
 * Performs the next step of worker `w`'s driver, then its local steps up to the next one that
 * touches the database or a tool (a death before a local step loses what a death after it does).
 */
export function perform(config: WorldConfig, world: World, w: number, protocol: Protocol): void {
  performOne(config, world, w, protocol);
  settle(config, world, w, protocol);
}

/** Runs worker `w`'s local steps until the next one touches the database or a tool. */
export function settle(config: WorldConfig, world: World, w: number, protocol: Protocol): void {
  for (
    let held = world.workers[w];
    held != null && held.ops[0] !== undefined && LOCAL.has(held.ops[0].op);
    held = world.workers[w]
  )
    performOne(config, world, w, protocol);
}

function performOne(config: WorldConfig, world: World, w: number, protocol: Protocol): void {
  const held = world.workers[w] as HoldModel;
  const op = held.ops.shift() as Op;
  const row = world.rows[held.turn] as TurnRow;
  const calls = config.turns[held.turn]?.calls ?? [];
  switch (op.op) {
    case 'model_call':
      // Core: the model's reply asks for the turn's batch; `dispatching` is persisted before any tool runs.
      held.phase = 'dispatching';
      held.ops.unshift({ op: 'write', terminal: false, release: false, batch: true }, { op: 'read_journal' });
      return;
    case 'read_inbox':
      return readInbox(config, world, held, protocol, op.parked);
    case 'read_journal':
      return readJournal(config, world, held, protocol);
    case 'write':
      return feed(config, held, protocol, {
        type: 'write',
        terminal: op.terminal,
        release: op.release,
        ...(op.derivable === true ? { derivable: true } : {}),
        ...(op.batch === true ? { batch: true } : {}),
      });
    case 'commit':
      return commit(config, world, w, held, op, protocol);
    case 'start': {
      const event: ProtocolEvent = { type: 'call_starting', callId: op.call };
      return feed(config, held, protocol, event);
    }
    case 'journal_start': {
      if (row.token !== op.token) return feed(config, held, protocol, fencedOut);
      const entry = journalRow(world, held.turn, calls, op.call);
      if (entry.result === null) entry.started = op.token;
      wrote(world, held.turn, row.token, w);
      return feed(config, held, protocol, { type: 'start_journaled', callId: op.call });
    }
    case 'run_tool': {
      const ran = world.ghost.ran[held.turn] as number[];
      const index = calls.findIndex((c) => c.id === op.call);
      ran[index] = (ran[index] ?? 0) + 1;
      return feed(config, held, protocol, { type: 'tool_finished', callId: op.call });
    }
    case 'write_result': {
      if (row.token !== op.token) return feed(config, held, protocol, fencedOut);
      const entry = journalRow(world, held.turn, calls, op.call);
      if (entry.result === null) entry.result = op.interrupted ? 'interrupted' : 'ok';
      wrote(world, held.turn, row.token, w);
      return;
    }
    case 'after_batch':
      return afterBatch(config, held);
    case 'depart':
      return depart(world, w, held, protocol);
  }
}

function journalRow(world: World, turn: number, calls: WorldConfig['turns'][number]['calls'], call: string) {
  return (world.journal[turn] as World['journal'][number])[
    calls.findIndex((c) => c.id === call)
  ] as World['journal'][number][number];
}

/**
 * The pending inbox rows: at the start of a drive (a cancel only) or in the parked handler. A cancel
 * taken ends the turn (core: cancelled); a parked turn without a decision ends the drive, released.
 */
function readInbox(config: WorldConfig, world: World, held: HoldModel, protocol: Protocol, parked: boolean): void {
  const rows = world.inbox
    .filter((e) => e.turn === held.turn && e.status === 'pending')
    .map((e) => ({ id: e.id, kind: e.kind, callId: e.call }));
  const cancelled = held.hold.cancelRow;
  feed(config, held, protocol, { type: 'inbox_read', rows, parked });
  if (held.hold.cancelRow !== cancelled) {
    held.phase = 'done';
    held.ops = [{ op: 'write', terminal: true, release: true }, { op: 'depart' }];
  } else if (parked && held.hold.lost === null && held.phase === 'awaiting_approval')
    held.ops.unshift({ op: 'write', terminal: false, release: true }, { op: 'depart' });
}

/** The batch's journal: the protocol decides, per call, its result, `interrupted`, or a run. */
function readJournal(config: WorldConfig, world: World, held: HoldModel, protocol: Protocol): void {
  const specs = config.turns[held.turn]?.calls ?? [];
  const batch = held.phase === 'executing_approved' ? specs.filter((c) => c.parked) : specs;
  const rows = world.journal[held.turn] as World['journal'][number];
  // As the worker: the batch of a deferred state is not read (its journal is taken to be empty).
  const read = journalNeedsRead(held.hold);
  const at = (id: string) => (read ? rows[specs.findIndex((c) => c.id === id)] : undefined);
  feed(config, held, protocol, {
    type: 'journal_read',
    calls: batch.map((c) => ({ id: c.id, idempotent: false })),
    results: batch.filter((c) => at(c.id)?.result != null).map((c) => c.id),
    started: batch.filter((c) => at(c.id)?.result == null && at(c.id)?.started != null).map((c) => c.id),
  });
  if (held.hold.lost === null) held.ops.push({ op: 'after_batch' });
}

/** Core's next status once the batch's results are in: parked calls wait for a decision, else the turn ends. */
function afterBatch(config: WorldConfig, held: HoldModel): void {
  const parks = config.turns[held.turn]?.calls.some((c) => c.parked) === true;
  if (held.phase === 'dispatching' && parks) {
    held.phase = 'awaiting_approval';
    held.ops.unshift({ op: 'write', terminal: false, release: false }, { op: 'read_inbox', parked: true });
    return;
  }
  held.phase = 'done';
  // Core's boundary after the batch (derivable from the dispatching commit and the journal: the
  // protocol skips it when no decision rides on it), then the end.
  held.ops.unshift(
    { op: 'write', terminal: false, release: false, derivable: true },
    { op: 'write', terminal: true, release: true },
    { op: 'depart' },
  );
}

/** The checkpoint (the store's commit.ts): fenced on the token, compare-and-swapped on the version, inbox rows settled. */
function commit(
  config: WorldConfig,
  world: World,
  w: number,
  held: HoldModel,
  op: Extract<Op, { op: 'commit' }>,
  protocol: Protocol,
): void {
  const row = world.rows[held.turn] as TurnRow;
  if ((op.token !== null && row.token !== op.token) || row.version !== held.version)
    return feed(config, held, protocol, fencedOut);
  row.status = held.phase;
  row.version += 1;
  held.version = row.version;
  held.stored = held.phase;
  wrote(world, held.turn, row.token, w);
  applyRows(world, held.turn, op.applied);
  // A call's start in the same statement: journaled only because the state was.
  if (op.start !== undefined) {
    const entry = journalRow(world, held.turn, config.turns[held.turn]?.calls ?? [], op.start);
    if (entry.result === null) entry.started = op.token;
  }
  const inbox = world.inbox.filter((e) => e.turn === held.turn);
  if (row.status === 'done' || op.release) {
    endLease(world, held.turn, row.token);
    row.owner = null;
    row.live = false;
  }
  if (row.status === 'done') {
    row.runnable = false;
    for (const entry of inbox) if (entry.status === 'pending') entry.status = 'ignored';
  } else if (op.release) {
    row.runnable = row.status !== 'awaiting_approval' || inbox.some((e) => e.status === 'pending');
  }
  feed(config, held, protocol, { type: 'committed', applied: op.applied });
  if (op.start !== undefined) feed(config, held, protocol, { type: 'start_journaled', callId: op.start });
}

/** The drive ended: the protocol says how the turn leaves (a parked retry is written, a handed-back or faulted one released). */
function depart(world: World, w: number, held: HoldModel, protocol: Protocol): void {
  const [, effects] = protocol.step(held.hold, { type: 'drive_ended', terminal: held.stored === 'done' });
  const row = world.rows[held.turn] as TurnRow;
  for (const effect of effects) {
    if (effect.type === 'park_retry') parkRetry(world, w, held, effect);
    if (effect.type !== 'release' || row.token !== effect.token || row.owner === null) continue;
    row.owner = null;
    row.live = false;
    endLease(world, held.turn, row.token);
  }
  world.workers[w] = null;
}

/** The retry's commit (the store's held-turn.ts parkRetry): fenced and compare-and-swapped, the state before the wait, `run_after` ahead, released. */
function parkRetry(world: World, w: number, held: HoldModel, effect: Extract<ProtocolEffect, { type: 'park_retry' }>): void {
  const row = world.rows[held.turn] as TurnRow;
  if (row.token !== effect.token || row.version !== held.version) return; // refused: the turn was lost meanwhile
  row.version += 1;
  row.retry = 'waiting';
  wrote(world, held.turn, row.token, w);
  applyRows(world, held.turn, effect.applied);
  endLease(world, held.turn, row.token);
  row.owner = null;
  row.live = false;
  row.runnable = row.status !== 'awaiting_approval' || world.inbox.some((e) => e.turn === held.turn && e.status === 'pending');
}

/** Inbox rows a committed state applied. */
function applyRows(world: World, turn: number, applied: readonly string[]): void {
  for (const entry of world.inbox) {
    if (entry.turn !== turn || !applied.includes(entry.id)) continue;
    entry.timesApplied += 1;
    if (entry.status === 'pending') entry.status = 'applied';
  }
}

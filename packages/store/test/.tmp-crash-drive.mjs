// test/fixtures/crash-drive.ts
import { defineTool } from "@turnkit/dispatch";
import { z } from "zod";

// src/errors.ts
var TurnExistsError = class extends Error {
  constructor(turnId2) {
    super(`store.submit: a turn with id '${turnId2}' exists already; pick another id or leave \`id\` out.`);
    this.turnId = turnId2;
    this.name = "TurnExistsError";
  }
  turnId;
};
var ThreadBusyError = class extends Error {
  constructor(threadId, turnId2, status) {
    super(
      `store.submit: thread '${threadId}' is busy: its turn '${turnId2}' has not ended (status ${status}), and a thread runs one turn at a time. Nothing was stored; submit again once it ends, or leave \`whenBusy\` out to queue behind it.`
    );
    this.threadId = threadId;
    this.turnId = turnId2;
    this.status = status;
    this.name = "ThreadBusyError";
  }
  threadId;
  turnId;
  status;
};
var ThreadClosedError = class extends Error {
  constructor(threadId) {
    super(`store.submit: thread '${threadId}' is closed and takes no more turns; start a new thread with another id.`);
    this.threadId = threadId;
    this.name = "ThreadClosedError";
  }
  threadId;
};
var ThreadNotFoundError = class extends Error {
  constructor(threadId) {
    super(`store.closeThread: there is no thread '${threadId}'; check the thread id (store.listThreads lists them).`);
    this.threadId = threadId;
    this.name = "ThreadNotFoundError";
  }
  threadId;
};
var quoted = (ids) => ids.map((id) => `'${id}'`).join(", ");
var TurnNotFoundError = class extends Error {
  constructor(turnId2, method = "decide") {
    super(`store.${method}: there is no turn '${turnId2}'; check the turn id (store.list lists the stored turns).`);
    this.turnId = turnId2;
    this.name = "TurnNotFoundError";
  }
  turnId;
};
var TurnNotWaitingError = class extends Error {
  constructor(turnId2, status) {
    super(
      `store.decide: turn '${turnId2}' is not waiting for approval (its status is ${status}); only a turn in status awaiting_approval takes decisions.`
    );
    this.turnId = turnId2;
    this.status = status;
    this.name = "TurnNotWaitingError";
  }
  turnId;
  status;
};
var UnknownCallError = class extends Error {
  constructor(turnId2, callIds, waiting) {
    const calls = callIds.length === 1 ? "call" : "calls";
    const rest = waiting.length === 0 ? "and none of its calls waits for a decision now" : `its calls waiting for a decision are ${quoted(waiting)}`;
    super(
      `store.decide: turn '${turnId2}' has no parked ${calls} ${quoted(callIds)}; ${rest}. Nothing of this request was stored; send decisions for waiting calls only.`
    );
    this.turnId = turnId2;
    this.callIds = callIds;
    this.waiting = waiting;
    this.name = "UnknownCallError";
  }
  turnId;
  callIds;
  waiting;
};
var CallAlreadyDecidedError = class extends Error {
  constructor(turnId2, callIds) {
    const which = callIds.length === 1 ? `call ${quoted(callIds)} of turn '${turnId2}' has` : `calls ${quoted(callIds)} of turn '${turnId2}' have`;
    super(
      `store.decide: ${which} a decision already, and the first decision per call stands; nothing of this request was stored, so send any other decisions again without ${callIds.length === 1 ? "it" : "them"}.`
    );
    this.turnId = turnId2;
    this.callIds = callIds;
    this.name = "CallAlreadyDecidedError";
  }
  turnId;
  callIds;
};
var LeaseLostError = class extends Error {
  constructor(turnId2) {
    super(
      `Turn '${turnId2}' is held by another worker now (its lease expired and was taken over); this worker stops working on it.`
    );
    this.turnId = turnId2;
    this.name = "LeaseLostError";
  }
  turnId;
};
var ConflictError = class extends Error {
  constructor(turnId2) {
    super(
      `Turn '${turnId2}' was written by someone else since this worker read it (compare-and-swap failed); this worker stops working on it.`
    );
    this.turnId = turnId2;
    this.name = "ConflictError";
  }
  turnId;
};
function isFencedOut(error) {
  return error instanceof LeaseLostError || error instanceof ConflictError;
}
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

// src/statuses.ts
var TERMINAL = /* @__PURE__ */ new Set(["stopped", "failed", "cancelled"]);
var STORED_STATUSES = [
  "ready",
  "calling_model",
  "dispatching",
  "awaiting_approval",
  "steering",
  "finalizing",
  "stopped",
  "failed",
  "cancelled"
];
var STATUSES = new Set(STORED_STATUSES);

// src/db/notify.ts
import { createHash } from "node:crypto";
function channelOf(schema2) {
  return `turnkit_${createHash("sha256").update(schema2).digest("hex").slice(0, 24)}`;
}
var CHANNEL_SQL = `'turnkit_' || left(encode(sha256(convert_to(current_schema(), 'UTF8')), 'hex'), 24)`;
var RECONNECT_MIN_MS = 100;
var RECONNECT_MAX_MS = 5e3;
async function listenPostgres(makeClient, channel, handlers) {
  let stopped = false;
  let client = null;
  let delay = RECONNECT_MIN_MS;
  let timer = null;
  let down = false;
  const lost = (error) => {
    const dead = client;
    client = null;
    if (dead !== null) void closeQuietly(dead);
    if (stopped) return;
    if (!down) {
      down = true;
      quietly(() => handlers.onConnection?.("lost", error));
    }
    timer = setTimeout(() => void connect(), delay);
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };
  async function connect() {
    timer = null;
    if (stopped) return;
    const next = makeClient();
    next.on("error", (error) => client === next ? lost(error) : void 0);
    next.on("end", () => client === next ? lost(new Error("the listening connection ended")) : void 0);
    next.on("notification", (message) => {
      if (message.channel === channel) quietly(handlers.onNotify);
    });
    try {
      client = next;
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      if (client === next) lost(error);
      return;
    }
    delay = RECONNECT_MIN_MS;
    if (down) {
      down = false;
      quietly(() => handlers.onConnection?.("restored"));
      quietly(handlers.onNotify);
    }
  }
  await connect();
  return async () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    const last = client;
    client = null;
    if (last !== null) await closeQuietly(last);
  };
}
function closeQuietly(client) {
  client.removeAllListeners();
  client.on("error", () => void 0);
  return client.end().catch(() => void 0);
}
function wakeups(sql, db) {
  const listeners = /* @__PURE__ */ new Set();
  let channelRead = null;
  const channel = () => channelRead ??= db().query("SELECT current_schema() AS schema").then(([row]) => channelOf(String(row?.schema ?? "public")));
  return {
    wake(really = true) {
      if (really && sql.listen === void 0) for (const l of listeners) quietly(l.onNotify);
    },
    async listen(handlers) {
      listeners.add(handlers);
      const stop = sql.listen === void 0 ? null : await sql.listen(await channel(), handlers);
      return async () => {
        listeners.delete(handlers);
        await stop?.();
      };
    },
    clear: () => listeners.clear()
  };
}
function quietly(fn) {
  try {
    fn();
  } catch {
  }
}

// src/sql/mark-runnable.ts
function markRunnable(tx, id) {
  return tx.query(
    // A parked turn waiting for an approval's deadline (run_after) takes a decision at once.
    `WITH t AS (UPDATE turnkit_turns SET runnable = true, run_after = CASE WHEN status = 'awaiting_approval' THEN NULL ELSE run_after END
       WHERE id = $1 RETURNING id) SELECT pg_notify(${CHANNEL_SQL}, id) FROM t`,
    [id]
  );
}

// src/sql/cancel.ts
async function cancelTurn(sql, id, reason) {
  if (reason !== void 0 && typeof reason !== "string") throw new TypeError("store.cancel: `reason` must be a string.");
  return sql.transaction(async (tx) => {
    const [row] = await tx.query("SELECT status FROM turnkit_turns WHERE id = $1 FOR UPDATE", [id]);
    if (row === void 0) throw new TurnNotFoundError(id, "cancel");
    if (TERMINAL.has(row.status)) return false;
    await tx.query(
      `INSERT INTO turnkit_inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING`,
      [id, JSON.stringify({ reason: reason ?? "cancelled by the caller" })]
    );
    await markRunnable(tx, id);
    return true;
  });
}

// src/sql/decide.ts
import { parseTurnState, undecided } from "@turnkit/core";
import { readDecision as readDecision2 } from "@turnkit/core/internal";

// src/crash.ts
var CRASH_POINTS = [
  "claimed",
  "dispatching_persisted",
  "tool_running",
  "tool_result_written",
  "before_commit",
  "decision_written"
];
var CRASH_ENV = "TURNKIT_STORE_CRASH_AT";
var TOOL_RUNNING_MS = 50;
var armed;
function armedCrash() {
  if (armed !== void 0) return armed;
  const value = process.env[CRASH_ENV];
  if (value === void 0 || value === "") return armed = null;
  const match = /^([a-z_]+)(?::([1-9]\d{0,5}))?$/.exec(value);
  const point = match?.[1];
  if (match === null || point === void 0 || !CRASH_POINTS.includes(point)) {
    throw new Error(
      `${CRASH_ENV}=${JSON.stringify(value)} names no crash point; use one of ${CRASH_POINTS.join(", ")}, optionally with :N.`
    );
  }
  return armed = { point, nth: Number(match[2] ?? 1), seen: 0 };
}
function crashArmed(point) {
  return armedCrash()?.point === point;
}
function crashPoint(point) {
  const spec = armedCrash();
  if (spec === null || spec.point !== point) return;
  spec.seen += 1;
  if (spec.seen < spec.nth) return;
  process.stderr.write(`turnkit store: crash point ${point} reached (${CRASH_ENV}); killing this process with SIGKILL
`);
  process.kill(process.pid, "SIGKILL");
}

// src/sql/values.ts
import { readDecision } from "@turnkit/core/internal";

// src/sql/lean.ts
import { sameJson } from "@turnkit/core/internal";
var LEAN_MARK = "~";
var STATE_BASE_1 = deepFreeze({
  version: 3,
  status: "ready",
  round: 0,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0, modelCalls: 0, toolCalls: 0 },
  forced: null,
  batch: { calls: [], notExecuted: [], held: [], parked: [], decisions: {} },
  lastBatch: null,
  repeats: 0,
  repairs: 0,
  recoveries: 0,
  candidate: null,
  nextModel: null,
  lastRequest: null,
  outcome: null
});
var STATE_BASE_2 = deepFreeze({
  ...STATE_BASE_1,
  version: 4,
  callIds: { count: 0, filter: "" }
});
var STATE_BASE_3 = deepFreeze({
  ...STATE_BASE_2,
  version: 5,
  agents: null
});
var STATE_BASES = [STATE_BASE_1, STATE_BASE_2, STATE_BASE_3];
var LIMITS_BASE = deepFreeze({
  maxIterations: 10,
  loopThreshold: 5,
  loopExemptTools: [],
  maxOutputRepairs: 2,
  maxCallsPerReply: 32,
  maxModelRetries: 2,
  modelRetryBackoffMs: 500,
  loopRecoveries: 0,
  budget: {}
});
var isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
function put(target, key, value) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
var SAME = /* @__PURE__ */ Symbol("same");
var UNEXPRESSIBLE = /* @__PURE__ */ Symbol("unexpressible");
function diff(value, base) {
  if (isObject(value) && isObject(base)) {
    const out = {};
    let changed = false;
    for (const key of Object.keys(base)) if (!Object.hasOwn(value, key)) return UNEXPRESSIBLE;
    for (const key of Object.keys(value)) {
      const d = Object.hasOwn(base, key) ? diff(value[key], base[key]) : value[key];
      if (d === UNEXPRESSIBLE) return UNEXPRESSIBLE;
      if (d === SAME) continue;
      put(out, key, d);
      changed = true;
    }
    return changed ? out : SAME;
  }
  return sameJson(value, base) ? SAME : value;
}
function merge(stored, base) {
  if (!isObject(stored) || !isObject(base)) return stored;
  const out = {};
  for (const key of Object.keys(base)) put(out, key, base[key]);
  for (const key of Object.keys(stored)) put(out, key, Object.hasOwn(base, key) ? merge(stored[key], base[key]) : stored[key]);
  return out;
}
function toLean(value, bases) {
  if (Object.hasOwn(value, LEAN_MARK)) return value;
  const list = Array.isArray(bases) ? bases : [bases];
  const d = diff(value, list.at(-1));
  if (d === UNEXPRESSIBLE) return value;
  const out = { [LEAN_MARK]: list.length };
  if (d !== SAME) for (const key of Object.keys(d)) put(out, key, d[key]);
  return out;
}
function fromLean(stored, bases) {
  if (!isObject(stored)) return stored;
  const version = stored[LEAN_MARK];
  const list = Array.isArray(bases) ? bases : [bases];
  const base = typeof version === "number" && Number.isInteger(version) && version >= 1 ? list[version - 1] : void 0;
  if (base === void 0) return stored;
  const rest = {};
  for (const key of Object.keys(stored)) if (key !== LEAN_MARK) put(rest, key, stored[key]);
  return merge(rest, base);
}
function deepFreeze(value) {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// src/sql/values.ts
var ISO = (column, as = column) => `to_json(${column}) #>> '{}' AS ${as}`;
function restoredState(id, state, limits) {
  if (state === null || state === void 0) return null;
  if (typeof state !== "object" || Array.isArray(state)) return state;
  const full = fromLean(state, STATE_BASES);
  return limits === null || limits === void 0 ? { ...full, id } : { ...full, id, limits: fromLean(limits, LIMITS_BASE) };
}
function storedState(state) {
  if (state === void 0) return { state: null, limits: null };
  const { id: _id, limits, ...rest } = state;
  return {
    state: JSON.stringify(leanOrAsIs(rest, STATE_BASES)),
    limits: JSON.stringify(leanOrAsIs(limits, LIMITS_BASE)) ?? null
  };
}
function leanOrAsIs(value, base) {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? toLean(value, base) : value;
}
var MESSAGES_SQL = `SELECT data FROM turnkit_log_entries WHERE turn_id = $1 AND kind = 'message' ORDER BY seq`;
function toInboxEntry(r) {
  const body = r.body ?? {};
  const decision = r.kind === "decision" ? readDecision(r.body) : null;
  return {
    kind: r.kind,
    callId: r.call_id ?? null,
    decision,
    reason: r.kind === "cancel" && typeof body.reason === "string" ? body.reason : null,
    status: r.status,
    createdAt: String(r.created_at),
    appliedAt: r.applied_at ?? null
  };
}
function toPending(r) {
  const body = r.body ?? {};
  return {
    inboxId: String(r.id),
    kind: r.kind,
    callId: r.call_id ?? null,
    decision: r.kind === "decision" ? r.body : null,
    reason: r.kind === "cancel" && typeof body.reason === "string" ? body.reason : null
  };
}
function rowResult(r) {
  const result = r.result;
  if (result === null || result === void 0) return null;
  if (typeof result !== "object" || Array.isArray(result) || Object.hasOwn(result, "callId")) return result;
  return { callId: String(r.call_id), name: String(r.name), ...result };
}
function toJournalRead(rows) {
  const results = [];
  const started = [];
  for (const r of rows) {
    const result = rowResult(r);
    if (result !== null) results.push(result);
    else started.push(String(r.call_id));
  }
  return { results, started };
}
function checkLeaseMs(leaseMs, what = "leaseMs") {
  if (typeof leaseMs !== "number" || !Number.isInteger(leaseMs) || leaseMs < 0 || leaseMs > 2147483647) {
    throw new RangeError(`${what} must be a whole number of milliseconds >= 0, got ${String(leaseMs)}.`);
  }
}

// src/sql/decide.ts
function checkDecisions(decisions) {
  if (decisions === null || typeof decisions !== "object" || Array.isArray(decisions))
    throw new TypeError(
      'store.decide needs decisions by call id: { [callId]: { type: "approve" } | { type: "reject", reason? } }.'
    );
  const entries = Object.entries(decisions);
  if (entries.length === 0) throw new TypeError("store.decide got no decisions; pass at least one { [callId]: decision }.");
  return entries.map(([callId, decision]) => {
    const read = readDecision2(decision);
    if (read === null) {
      throw new TypeError(
        `store.decide: the decision for call '${callId}' is ${JSON.stringify(decision)}; use { type: 'approve', remember?: 'session' | 'tool' } or { type: 'reject', reason? }.`
      );
    }
    return [callId, read];
  });
}
async function lockParkedState(tx, id) {
  const [row] = await tx.query("SELECT status, state, state_limits FROM turnkit_turns WHERE id = $1 FOR UPDATE", [id]);
  if (row === void 0) throw new TurnNotFoundError(id);
  if (row.status !== "awaiting_approval") throw new TurnNotWaitingError(id, String(row.status));
  try {
    return parseTurnState(restoredState(id, row.state, row.state_limits));
  } catch (error) {
    throw new Error(`store.decide: the stored state of turn '${id}' cannot be read (${messageOf(error)}).`);
  }
}
async function checkParked(tx, id, state, callIds) {
  const parked = parkedIds(state);
  const rows = await tx.query(
    `SELECT call_id FROM turnkit_inbox WHERE turn_id = $1 AND kind = 'decision' AND call_id = ANY($2::text[])`,
    [id, parked]
  );
  checkDecidable(id, state, new Set(rows.map((r) => String(r.call_id))), callIds);
}
function parkedIds(state) {
  return (state.batch?.parked ?? []).map((p) => p.call.id);
}
function checkDecidable(id, state, inInbox, callIds) {
  const parked = parkedIds(state);
  const open = new Set(undecided(state).map((p) => p.call.id));
  const decided = (callId) => !open.has(callId) || inInbox.has(callId);
  const known = new Set(parked);
  const unknown = callIds.filter((callId) => !known.has(callId));
  if (unknown.length > 0)
    throw new UnknownCallError(
      id,
      unknown,
      parked.filter((callId) => !decided(callId))
    );
  const taken = callIds.filter(decided);
  if (taken.length > 0) throw new CallAlreadyDecidedError(id, taken);
}
async function decideTurn(sql, id, decisions) {
  const entries = checkDecisions(decisions);
  const result = await sql.transaction(async (tx) => {
    const state = await lockParkedState(tx, id);
    await checkParked(
      tx,
      id,
      state,
      entries.map(([callId]) => callId)
    );
    for (const [callId, decision] of entries) {
      const inserted = await tx.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, call_id, body) VALUES ($1, 'decision', $2, $3::jsonb) ON CONFLICT (turn_id, call_id) WHERE kind = 'decision' DO NOTHING RETURNING id`,
        [id, callId, JSON.stringify(decision)]
      );
      if (inserted.length === 0) throw new CallAlreadyDecidedError(id, [callId]);
    }
    await markRunnable(tx, id);
    return { accepted: entries.map(([callId]) => callId), ignored: [] };
  });
  crashPoint("decision_written");
  return result;
}

// src/sql/get-turn.ts
import {
  isTerminal,
  parseTurnState as parseTurnState2,
  undecided as undecided2
} from "@turnkit/core";
function readState(id, raw) {
  if (raw === null || raw === void 0) return { state: null, unreadable: null };
  try {
    return { state: parseTurnState2(raw), unreadable: null };
  } catch (error) {
    return {
      state: null,
      unreadable: { kind: "corrupt_state", message: `The stored state of turn '${id}' cannot be read (${messageOf(error)}).` }
    };
  }
}
function toJournalEntry(r) {
  return {
    callId: String(r.call_id),
    name: String(r.name),
    startedAt: r.started_at ?? null,
    finishedAt: r.finished_at ?? null,
    result: rowResult(r)
  };
}
function undecidedParked(state, decisions) {
  if (state === null || state.status !== "awaiting_approval" || state.batch === null) return [];
  const decided = new Set(
    decisions.filter((d) => d.kind === "decision" && d.status !== "ignored" && d.decision !== null).map((d) => d.callId)
  );
  return undecided2(state).filter((p) => !decided.has(p.call.id));
}
async function getTurn(db, id) {
  const [row] = await db.query(
    `SELECT id, agent, thread, input, status, state, state_limits, error, ${ISO("created_at")}, ${ISO("updated_at")}, ${ISO("ended_at")} FROM turnkit_turns WHERE id = $1`,
    [id]
  );
  if (row === void 0) return null;
  const [log, inbox, calls] = await Promise.all([
    db.query(MESSAGES_SQL, [id]),
    db.query(
      `SELECT kind, call_id, body, status, ${ISO("created_at")}, ${ISO("applied_at")} FROM turnkit_inbox WHERE turn_id = $1 ORDER BY id`,
      [id]
    ),
    db.query(
      `SELECT call_id, name, result, ${ISO("started_at")}, ${ISO("finished_at")} FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) ORDER BY coalesce(started_at, finished_at), call_id`,
      [id]
    )
  ]);
  const { state, unreadable } = readState(id, restoredState(row.id, row.state, row.state_limits));
  const decisions = inbox.map(toInboxEntry);
  const storeError = row.error ?? null;
  const outcome = storeError !== null ? { status: "failed", error: storeError } : state !== null && isTerminal(state) ? state.outcome : null;
  return {
    id: String(row.id),
    agent: String(row.agent),
    thread: row.thread ?? null,
    status: row.status,
    input: row.input ?? null,
    state,
    transcript: log.map((r) => r.data),
    parked: undecidedParked(state, decisions),
    decisions,
    toolCalls: calls.map(toJournalEntry),
    outcome,
    error: storeError ?? unreadable ?? (outcome?.status === "failed" ? outcome.error : null),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    endedAt: row.ended_at ?? null
  };
}

// src/sql/list-turns.ts
function checkList(options) {
  const { status, cursor } = options;
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1e3)
    throw new RangeError(`store.list option \`limit\` must be a whole number from 1 to 1000, got ${String(limit)}.`);
  if (status !== void 0 && !STATUSES.has(status))
    throw new TypeError(
      `store.list option \`status\` must be one of ${[...STATUSES].join(", ")}; got ${JSON.stringify(status)}.`
    );
  if (cursor !== void 0 && cursor !== null && !/^\d+$/.test(cursor))
    throw new TypeError(`store.list option \`cursor\` must be the cursor of a previous page, got ${JSON.stringify(cursor)}.`);
  return limit;
}
async function listTurns(db, options = {}) {
  const limit = checkList(options);
  const rows = await db.query(
    `SELECT seq::text AS seq, id, agent, thread, status, ${ISO("created_at")}, ${ISO("updated_at")} FROM turnkit_turns
     WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR seq > $2::bigint) ORDER BY seq LIMIT $3`,
    [options.status ?? null, options.cursor ?? null, limit + 1]
  );
  const page = rows.slice(0, limit);
  const turns = page.map(toTurnSummary);
  return { turns, cursor: rows.length > limit ? String(page[page.length - 1]?.seq) : null };
}
function toTurnSummary(r) {
  return {
    id: String(r.id),
    agent: String(r.agent),
    thread: r.thread ?? null,
    status: r.status,
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at)
  };
}

// src/sql/submit.ts
import { createTurn } from "@turnkit/core";

// src/ids.ts
import { randomBytes } from "node:crypto";
function newTurnId(now = Date.now()) {
  const bytes = randomBytes(16);
  let time = Math.floor(now);
  for (let i = 5; i >= 0; i -= 1) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  bytes[6] = bytes[6] & 15 | 112;
  bytes[8] = bytes[8] & 63 | 128;
  const hex = bytes.toString("hex");
  return `turn_${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// src/sql/submit.ts
var ID = /^[A-Za-z0-9_.:@-]{1,200}$/;
var UNIQUE_VIOLATION = "23505";
function checkSubmit(options) {
  if (options === null || typeof options !== "object")
    throw new TypeError("store.submit needs { agent, input?, id?, limits?, thread?, whenBusy? }.");
  const { agent, input, limits, thread, whenBusy } = options;
  if (typeof agent !== "string" || agent === "")
    throw new TypeError(
      `store.submit option \`agent\` must be the name of an agent a worker registers, got ${JSON.stringify(agent)}.`
    );
  if (input !== void 0 && typeof input !== "string") throw new TypeError("store.submit option `input` must be a string.");
  const id = options.id ?? newTurnId();
  if (typeof id !== "string" || !ID.test(id))
    throw new TypeError(`store.submit option \`id\` must be 1 to 200 letters, digits or _ . : @ -, got ${JSON.stringify(id)}.`);
  if (thread !== void 0 && (typeof thread !== "string" || !ID.test(thread)))
    throw new TypeError(
      `store.submit option \`thread\` must be 1 to 200 letters, digits or _ . : @ -, got ${JSON.stringify(thread)}.`
    );
  if (whenBusy !== void 0 && whenBusy !== "wait" && whenBusy !== "refuse")
    throw new TypeError(`store.submit option \`whenBusy\` must be 'wait' or 'refuse', got ${JSON.stringify(whenBusy)}.`);
  if (whenBusy !== void 0 && thread === void 0)
    throw new TypeError("store.submit option `whenBusy` applies to a turn of a thread: give `thread` too, or leave it out.");
  if (limits !== void 0) createTurn({ id, limits });
  return id;
}
var INSERT_SQL = `WITH t AS (INSERT INTO turnkit_turns (id, agent, input, limits, status, thread) VALUES ($1, $2, $3, $4::jsonb, 'ready', $5) RETURNING id)
  SELECT id, pg_notify(${CHANNEL_SQL}, id) FROM t`;
async function submitTurn(sql, options) {
  const id = checkSubmit(options);
  const values = [id, options.agent, options.input ?? null, options.limits === void 0 ? null : JSON.stringify(options.limits)];
  try {
    const { thread } = options;
    if (thread === void 0) await sql.query(INSERT_SQL, [...values, null]);
    else
      await sql.transaction(async (tx) => {
        await lockThread(tx, thread, options.agent, options.whenBusy ?? "wait");
        await tx.query(INSERT_SQL, [...values, thread]);
      });
  } catch (error) {
    if (error?.code === UNIQUE_VIOLATION) throw new TurnExistsError(id);
    throw error;
  }
  return id;
}
async function lockThread(tx, thread, agent, whenBusy) {
  await tx.query(
    `INSERT INTO turnkit_threads (id, agent) SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM turnkit_threads WHERE id = $1) ON CONFLICT (id) DO NOTHING`,
    [thread, agent]
  );
  const [row] = await tx.query(`SELECT agent, closed_at IS NOT NULL AS closed FROM turnkit_threads WHERE id = $1 FOR UPDATE`, [
    thread
  ]);
  if (row === void 0) throw new Error(`store.submit: thread '${thread}' could not be made; submit again.`);
  if (row.closed === true) throw new ThreadClosedError(thread);
  if (row.agent !== agent)
    throw new TypeError(
      `store.submit: thread '${thread}' belongs to agent '${String(row.agent)}', not '${agent}'; a thread's turns all run one agent (start a new thread for another).`
    );
  if (whenBusy === "wait") return;
  const [busy] = await tx.query(
    "SELECT id, status FROM turnkit_turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq LIMIT 1",
    [thread]
  );
  if (busy !== void 0) throw new ThreadBusyError(thread, String(busy.id), String(busy.status));
}

// src/sql/watch.ts
function nap(ms, signal) {
  return new Promise((resolve3) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve3();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
function toWatchEvent(r) {
  const seq = Number(r.seq);
  if (r.kind === "message") return { type: "message", seq, message: r.data };
  if (r.kind === "notice") return { type: "notice", seq, notice: r.data };
  const data = r.data;
  return { type: "status", seq, status: data.status, outcome: data.outcome ?? null };
}
function checkPollMs(options) {
  const pollMs = options.pollMs ?? 200;
  if (!Number.isFinite(pollMs) || pollMs < 1)
    throw new RangeError(`store.watch option \`pollMs\` must be a number of milliseconds >= 1, got ${String(pollMs)}.`);
  return pollMs;
}
async function* watchTurn(sql, id, options) {
  const pollMs = checkPollMs(options);
  let after = options.after ?? 0;
  const [turn] = await sql.query("SELECT status FROM turnkit_turns WHERE id = $1", [id]);
  if (turn === void 0) throw new Error(`store.watch: there is no turn '${id}'.`);
  for (; ; ) {
    if (options.signal?.aborted === true) return;
    const rows = await sql.query(
      `SELECT seq, kind, data FROM turnkit_log_entries WHERE turn_id = $1 AND seq > $2 AND kind <> 'compaction' ORDER BY seq`,
      [id, after]
    );
    for (const r of rows) {
      const event = toWatchEvent(r);
      after = event.seq;
      yield event;
      if (event.type === "status" && TERMINAL.has(event.status)) return;
    }
    if (rows.length === 0) {
      const [now] = await sql.query("SELECT status, log_seq FROM turnkit_turns WHERE id = $1", [id]);
      if (now === void 0 || TERMINAL.has(now.status) && Number(now.log_seq) <= after) return;
      await nap(pollMs, options.signal);
    }
  }
}

// src/sql/close-thread.ts
async function closeThread(sql, id, reason) {
  if (reason !== void 0 && typeof reason !== "string") throw new TypeError("store.closeThread: `reason` must be a string.");
  const why = reason ?? "the thread was closed";
  return sql.transaction(async (tx) => {
    const [row] = await tx.query("SELECT closed_at FROM turnkit_threads WHERE id = $1 FOR UPDATE", [id]);
    if (row === void 0) throw new ThreadNotFoundError(id);
    if (row.closed_at !== null && row.closed_at !== void 0) return false;
    await tx.query(`UPDATE turnkit_threads SET closed_at = now(), close_reason = $2, grants = '[]' WHERE id = $1`, [id, why]);
    const open = await tx.query("SELECT id FROM turnkit_turns WHERE thread = $1 AND ended_at IS NULL ORDER BY seq", [id]);
    for (const turn of open) {
      await tx.query(
        `INSERT INTO turnkit_inbox (turn_id, kind, body) VALUES ($1, 'cancel', $2::jsonb) ON CONFLICT (turn_id) WHERE kind = 'cancel' DO NOTHING`,
        [turn.id, JSON.stringify({ reason: why })]
      );
      await markRunnable(tx, String(turn.id));
    }
    return true;
  });
}

// src/sql/thread-context.ts
var CONTEXT_SQL = `SELECT kind, data FROM turnkit_log_entries
  WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq <= $2
    AND t.seq >= coalesce((SELECT context_turn FROM turnkit_threads WHERE id = $1), 0)))
  AND kind IN ('message', 'compaction') ORDER BY turn_seq, seq`;
function contextOf(rows) {
  let context = [];
  for (const r of rows) {
    if (r.kind === "compaction") context = Array.isArray(r.data) ? [...r.data] : context;
    else context.push(r.data);
  }
  return context;
}
async function readThreadContext(db, thread, upTo = Number.MAX_SAFE_INTEGER) {
  return contextOf(await db.query(CONTEXT_SQL, [thread, upTo]));
}

// src/sql/get-thread.ts
var CURRENT_SQL = `(SELECT c.id FROM turnkit_turns c WHERE c.thread = th.id AND c.ended_at IS NULL ORDER BY c.seq LIMIT 1)`;
async function getThread(db, id) {
  const [row] = await db.query(
    `SELECT th.id, th.agent, th.grants, th.close_reason, ${ISO("th.created_at", "created_at")}, ${ISO("th.closed_at", "closed_at")},
       ${CURRENT_SQL} AS current
     FROM turnkit_threads th WHERE th.id = $1`,
    [id]
  );
  if (row === void 0) return null;
  const [turns, transcript] = await Promise.all([
    db.query(
      `SELECT id, agent, thread, status, ${ISO("created_at")}, ${ISO("updated_at")} FROM turnkit_turns WHERE thread = $1 ORDER BY seq`,
      [id]
    ),
    readThreadContext(db, id)
  ]);
  const current = row.current ?? null;
  const parked = current === null ? [] : (await getTurn(db, current))?.parked ?? [];
  const closed = row.closed_at !== null && row.closed_at !== void 0;
  return {
    id: String(row.id),
    agent: String(row.agent),
    status: closed ? "closed" : "open",
    turns: turns.map(toTurnSummary),
    transcript,
    current,
    parked,
    grants: closed ? [] : row.grants ?? [],
    closeReason: row.close_reason ?? null,
    createdAt: String(row.created_at),
    closedAt: closed ? String(row.closed_at) : null
  };
}
function toThreadSummary(r) {
  const closed = r.closed_at !== null && r.closed_at !== void 0;
  return {
    id: String(r.id),
    agent: String(r.agent),
    status: closed ? "closed" : "open",
    turns: Number(r.turns),
    current: r.current ?? null,
    createdAt: String(r.created_at),
    closedAt: closed ? String(r.closed_at) : null
  };
}
async function listThreads(db, options = {}) {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1e3)
    throw new RangeError(`store.listThreads option \`limit\` must be a whole number from 1 to 1000, got ${String(limit)}.`);
  const cursor = options.cursor ?? null;
  if (cursor !== null && typeof cursor !== "string")
    throw new TypeError(
      `store.listThreads option \`cursor\` must be the cursor of a previous page, got ${JSON.stringify(cursor)}.`
    );
  const rows = await db.query(
    `SELECT th.id, th.agent, ${ISO("th.created_at", "created_at")}, ${ISO("th.closed_at", "closed_at")},
       (SELECT count(*) FROM turnkit_turns n WHERE n.thread = th.id)::int AS turns, ${CURRENT_SQL} AS current
     FROM turnkit_threads th WHERE $1::text IS NULL OR th.id > $1 ORDER BY th.id LIMIT $2`,
    [cursor, limit + 1]
  );
  const page = rows.slice(0, limit);
  return { threads: page.map(toThreadSummary), cursor: rows.length > limit ? String(page[page.length - 1]?.id) : null };
}

// src/sql/watch-thread.ts
async function* watchThread(sql, thread, options) {
  const pollMs = checkPollMs(options);
  if (options.after !== void 0)
    throw new TypeError(
      "store.watch({ thread }) takes no `after`: it follows the whole thread (watch a turn by its id to start later)."
    );
  const [found] = await sql.query("SELECT 1 FROM turnkit_threads WHERE id = $1", [thread]);
  if (found === void 0) throw new Error(`store.watch: there is no thread '${thread}'.`);
  let turn = 0;
  let after = 0;
  for (; ; ) {
    if (options.signal?.aborted === true) return;
    const rows = await sql.query(
      `SELECT turn_id, turn_seq, seq, kind, data FROM turnkit_log_entries
       WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq >= $2))
         AND (turn_seq > $2 OR seq > $3) AND kind <> 'compaction' ORDER BY turn_seq, seq`,
      [thread, turn, after]
    );
    for (const r of rows) {
      turn = Number(r.turn_seq);
      const event = toWatchEvent(r);
      after = event.seq;
      yield { ...event, turnId: String(r.turn_id) };
    }
    if (rows.length === 0) {
      const [state] = await sql.query(
        `SELECT th.closed_at IS NOT NULL AS closed,
           NOT EXISTS (SELECT 1 FROM turnkit_turns t WHERE t.thread = th.id AND t.ended_at IS NULL) AS ended
         FROM turnkit_threads th WHERE th.id = $1`,
        [thread]
      );
      if (state === void 0 || state.closed === true && state.ended === true) {
        const [late] = await sql.query(
          `SELECT 1 FROM turnkit_log_entries WHERE turn_seq = ANY(ARRAY(SELECT t.seq FROM turnkit_turns t WHERE t.thread = $1 AND t.seq >= $2))
             AND (turn_seq > $2 OR seq > $3) AND kind <> 'compaction' LIMIT 1`,
          [thread, turn, after]
        );
        if (late === void 0) return;
        continue;
      }
      await nap(pollMs, options.signal);
    }
  }
}

// src/client/client.ts
function isThreadRef(ref) {
  if (typeof ref === "string") return false;
  if (ref !== null && typeof ref === "object" && typeof ref.thread === "string") return true;
  throw new TypeError(`Pass a turn's id or { thread: id }, got ${JSON.stringify(ref) ?? String(ref)}.`);
}
function createClient(db, wakeups2) {
  const wake = (value, really = true) => {
    wakeups2.wake(really);
    return value;
  };
  return {
    submit: async (options) => wake(await submitTurn(db(), options)),
    get: (async (ref) => isThreadRef(ref) ? getThread(db(), ref.thread) : getTurn(db(), ref)),
    list: async (options) => listTurns(db(), options),
    listThreads: async (options) => listThreads(db(), options),
    closeThread: async (thread, reason) => wake(await closeThread(db(), thread, reason)),
    decide: async (id, decisions) => {
      const result = await decideTurn(db(), id, decisions);
      return wake(result, result.accepted.length > 0);
    },
    cancel: async (id, reason) => wake(await cancelTurn(db(), id, reason)),
    watch: ((ref, options = {}) => isThreadRef(ref) ? watchThread(db(), ref.thread, options) : watchTurn(db(), ref, options))
  };
}

// src/db/driver.ts
var defaultLoader = (name) => import(name);
async function loadDriver(name, what, load = defaultLoader, beside = "@turnkit/store") {
  try {
    return await load(name);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    const code = error?.code;
    const install = packageOf(name);
    const missing = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" || /Cannot find (package|module)/.test(why);
    throw new Error(
      missing ? `${what} needs the package '${install}', which is not installed. Install it next to ${beside}: npm install ${install}` : `${what} needs the package '${install}', which is installed but could not be loaded (${why}). Reinstall it: npm install ${install}`
    );
  }
}
function packageOf(specifier) {
  const parts = specifier.split("/");
  return parts.slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
}
var SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
function checkSchemaName(schema2) {
  if (typeof schema2 !== "string" || !SCHEMA_NAME.test(schema2)) {
    throw new TypeError(
      `openStore option \`schema\` must be a plain lower-case name (letters, digits, '_', up to 63), got ${JSON.stringify(schema2)}.`
    );
  }
  return schema2;
}

// src/db/pglite.ts
import { existsSync, lstatSync, mkdirSync as mkdirSync2, rmSync as rmSync3 } from "node:fs";
import { dirname as dirname3, resolve as resolve2 } from "node:path";

// src/db/lock.ts
import { randomUUID } from "node:crypto";
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
function lockPath(dataDir) {
  const full = realPath(dataDir);
  return join(dirname(full), `${basename(full)}.lock`);
}
function realPath(path) {
  const full = resolve(path);
  try {
    return realpathSync(full);
  } catch (error) {
    const code = error.code;
    const parent = dirname(full);
    if (code !== "ENOENT" && code !== "ENOTDIR" || parent === full) return full;
    return join(realPath(parent), basename(full));
  }
}
function takeLock(dataDir) {
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (createLock(path)) {
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (readPid(path) === process.pid) rmSync(path, { force: true });
      };
    }
    const holder = readPid(path);
    if (holder !== null && isAlive(holder)) {
      throw new Error(
        `The PGlite store in ${realPath(dataDir)} is in use by process ${holder} (lock file ${path}). PGlite serves one process only: stop that process, or use Postgres for several processes (openStore("postgres://\u2026")).`
      );
    }
    removeStale(path, holder);
  }
  throw new Error(
    `Could not take the lock file ${path}: other processes keep taking it. Use Postgres for several processes (openStore("postgres://\u2026")).`
  );
}
function createLock(path) {
  return createFileOnce(path, String(process.pid));
}
function createFileOnce(path, text, mode = 420) {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  const fd = openSync(aside, "w", mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(aside, path);
    return true;
  } catch (error) {
    if (error.code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(aside, { force: true });
  }
}
function removeStale(path, stale) {
  const aside = `${path}.${process.pid}.${randomUUID()}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if (error.code === "ENOENT") return;
    throw error;
  }
  if (readPid(aside) !== stale) {
    try {
      linkSync(aside, path);
    } catch {
    }
  }
  rmSync(aside, { force: true });
}
function readPid(path) {
  try {
    const text = readFileSync(path, "utf8").trim();
    const pid = Number(text);
    return /^\d+$/.test(text) && Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

// src/db/pglite-template.ts
import { randomUUID as randomUUID2 } from "node:crypto";
import { mkdirSync, readFileSync as readFileSync2, renameSync as renameSync2, rmSync as rmSync2, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname as dirname2, join as join2 } from "node:path";
function templateFile() {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const manifest = JSON.parse(readFileSync2(join2(dirname2(dirname2(entry)), "package.json"), "utf8"));
    if (typeof manifest.version !== "string" || !/^[0-9A-Za-z.+-]+$/.test(manifest.version)) return null;
    return join2(tmpdir(), "turnkit-pglite", `cluster-${manifest.version}.tar`);
  } catch {
    return null;
  }
}
function readTemplate(file) {
  try {
    return new Blob([readFileSync2(file)]);
  } catch {
    return null;
  }
}
async function writeTemplate(file, dump) {
  const partial = `${file}.${randomUUID2()}.partial`;
  try {
    const bytes = Buffer.from(await (await dump()).arrayBuffer());
    mkdirSync(dirname2(file), { recursive: true });
    writeFileSync(partial, bytes);
    renameSync2(partial, file);
  } catch {
    rmSync2(partial, { force: true });
  }
}
function dropTemplate(file) {
  rmSync2(file, { force: true });
}

// src/db/pglite.ts
async function openPGlite(dataDir, schema2, load) {
  const mod = await loadDriver("@electric-sql/pglite", "openStore() with PGlite", load);
  let unlock;
  const dir = dataDir === void 0 ? void 0 : prepareDataDir(dataDir);
  if (dir !== void 0) unlock = takeLock(dir);
  let db;
  try {
    db = dir === void 0 ? new mod.PGlite() : await openDirectory(mod.PGlite, dir);
    await db.waitReady;
    if (schema2 !== void 0) {
      await db.query(`CREATE SCHEMA IF NOT EXISTS ${schema2}`);
      await db.query(`SET search_path TO ${schema2}`);
    }
  } catch (error) {
    unlock?.();
    throw dir === void 0 ? error : cannotOpen(dir, error);
  }
  const rows = async (promise) => (await promise).rows;
  return {
    kind: "pglite",
    query: (text, params2) => rows(db.query(text, params2 === void 0 ? void 0 : [...params2])),
    transaction: (work) => db.transaction(
      (tx) => work({ query: (text, params2) => rows(tx.query(text, params2 === void 0 ? void 0 : [...params2])) })
    ),
    async close() {
      try {
        await db.close();
      } finally {
        unlock?.();
      }
    }
  };
}
async function openDirectory(PGlite, dir) {
  const file = existsSync(dir) ? null : templateFile();
  if (file === null) return new PGlite(dir);
  const template = readTemplate(file);
  if (template !== null) {
    const db2 = new PGlite(dir, { loadDataDir: template });
    try {
      await db2.waitReady;
      return db2;
    } catch {
      await db2.close().catch(() => void 0);
      dropTemplate(file);
      rmSync3(dir, { recursive: true, force: true });
    }
  }
  const db = new PGlite(dir);
  await db.waitReady;
  if (db.dumpDataDir !== void 0)
    await writeTemplate(file, () => db.dumpDataDir("none"));
  return db;
}
function prepareDataDir(dataDir) {
  const dir = realPath(dataDir);
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    stat = null;
  }
  if (stat?.isSymbolicLink())
    throw new Error(
      `The PGlite store path ${resolve2(dataDir)} is a symbolic link to a missing directory; create its target or remove the link.`
    );
  if (stat !== null && !stat.isDirectory())
    throw new Error(
      `The PGlite store path ${resolve2(dataDir)} is a file, not a directory: name a directory (created if missing), or remove the file.`
    );
  if (stat === null) {
    try {
      mkdirSync2(dirname3(dir), { recursive: true });
    } catch (error) {
      const code = error.code;
      const why = code === "EEXIST" || code === "ENOTDIR" ? "a part of it is a file, not a directory" : code === "EACCES" || code === "EPERM" ? `this process may not create ${dirname3(dir)}` : error.message;
      throw new Error(
        `The PGlite store path ${resolve2(dataDir)} cannot be created (${why}); name a directory this process may write.`
      );
    }
  }
  return dir;
}
var PGLITE_ERRNO = {
  2: "permission denied",
  63: "operation not permitted",
  44: "not found",
  54: "a part of it is not a directory",
  31: "it is a directory where a file was expected",
  20: "it exists already",
  69: "read-only file system",
  51: "no space left on the device",
  32: "too many symbolic links"
};
function cannotOpen(dir, error) {
  const errno = error?.errno;
  if (error?.name !== "ErrnoError" || typeof errno !== "number") return error;
  const why = PGLITE_ERRNO[errno] ?? `file system error ${errno}`;
  return new Error(
    `PGlite could not open the store directory ${dir} (${why}): name a directory this process may read and write, holding a PGlite store or empty.`,
    { cause: error }
  );
}

// src/db/postgres.ts
import { createHash as createHash2 } from "node:crypto";
var names = /* @__PURE__ */ new Map();
function prepared(text, params2) {
  if (params2 === void 0 || params2.length === 0) return { text };
  let name = names.get(text);
  if (name === void 0) {
    name = `turnkit_${createHash2("sha256").update(text).digest("hex").slice(0, 24)}`;
    if (names.size < 1e3) names.set(text, name);
  }
  return { text, values: [...params2], name };
}
async function openPostgres(url2, schema2, load) {
  const mod = await loadDriver("pg", 'openStore("postgres://\u2026")', load);
  const Pool = mod.Pool ?? mod.default?.Pool;
  const Client = mod.Client ?? mod.default?.Client;
  if (Pool === void 0 || Client === void 0)
    throw new Error("The installed 'pg' package has no Pool or Client export; install pg >= 8.");
  const config = {
    connectionString: url2,
    max: 10,
    keepAlive: true,
    connectionTimeoutMillis: 1e4
  };
  if (schema2 !== void 0) {
    const setup = new Pool({ connectionString: url2, max: 1 });
    setup.on("error", () => void 0);
    try {
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema2}`);
    } finally {
      await setup.end();
    }
    config.options = `-c search_path=${schema2}`;
  }
  const pool = new Pool(config);
  pool.on("error", () => void 0);
  const rows = async (promise) => (await promise).rows;
  return {
    kind: "postgres",
    query: (text, params2) => rows(pool.query(prepared(text, params2))),
    async transaction(work) {
      const client = await pool.connect();
      let broken = false;
      const dropped = () => {
        broken = true;
      };
      client.on("error", dropped);
      try {
        await client.query("BEGIN");
        const result = await work({
          query: (text, params2) => rows(client.query(prepared(text, params2)))
        });
        await client.query("COMMIT");
        return result;
      } catch (error) {
        try {
          await client.query("ROLLBACK");
        } catch {
          broken = true;
        }
        throw error;
      } finally {
        client.off("error", dropped);
        client.release(broken);
      }
    },
    close: () => pool.end(),
    listen: (channel, handlers) => listenPostgres(() => new Client(config), channel, handlers)
  };
}

// src/schema/migrations.ts
var MIGRATIONS = [
  `
  CREATE TABLE turnkit_turns (
    id text PRIMARY KEY,
    seq bigserial UNIQUE,
    agent text NOT NULL,
    input text,
    limits jsonb,
    status text NOT NULL,
    state jsonb,
    error jsonb,
    grants jsonb NOT NULL DEFAULT '[]',
    budget_usage jsonb,
    version integer NOT NULL DEFAULT 0,
    log_seq integer NOT NULL DEFAULT 0,
    runnable boolean NOT NULL DEFAULT true,
    lease_owner text,
    lease_token integer NOT NULL DEFAULT 0,
    lease_expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    ended_at timestamptz
  );
  CREATE INDEX turnkit_turns_runnable ON turnkit_turns (seq) WHERE runnable;
  CREATE INDEX turnkit_turns_status ON turnkit_turns (status, seq);

  CREATE TABLE turnkit_log (
    turn_id text NOT NULL REFERENCES turnkit_turns (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    kind text NOT NULL CHECK (kind IN ('message', 'notice', 'status')),
    data jsonb NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (turn_id, seq)
  );

  CREATE TABLE turnkit_tool_results (
    turn_id text NOT NULL REFERENCES turnkit_turns (id) ON DELETE CASCADE,
    call_id text NOT NULL,
    name text NOT NULL,
    started_at timestamptz,
    started_token integer,
    result jsonb,
    finished_at timestamptz,
    PRIMARY KEY (turn_id, call_id)
  );

  CREATE TABLE turnkit_inbox (
    id bigserial PRIMARY KEY,
    turn_id text NOT NULL REFERENCES turnkit_turns (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('decision', 'cancel')),
    call_id text,
    body jsonb NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'ignored')),
    created_at timestamptz NOT NULL DEFAULT now(),
    applied_at timestamptz
  );
  CREATE UNIQUE INDEX turnkit_inbox_one_decision ON turnkit_inbox (turn_id, call_id) WHERE kind = 'decision';
  CREATE UNIQUE INDEX turnkit_inbox_one_cancel ON turnkit_inbox (turn_id) WHERE kind = 'cancel';
  CREATE INDEX turnkit_inbox_pending ON turnkit_inbox (turn_id) WHERE status = 'pending';
  `,
  // Many workers: a turn waiting to retry is parked with the time it may run again; each log row
  // keeps the fencing token of the lease that wrote it (the history shows one writer at a time).
  `
  ALTER TABLE turnkit_turns ADD COLUMN run_after timestamptz;
  ALTER TABLE turnkit_log ADD COLUMN lease_token integer;
  CREATE INDEX turnkit_turns_held ON turnkit_turns (agent) WHERE lease_owner IS NOT NULL;
  `,
  // Observers: what the last activation's observer asked to keep (a trace context), for the next.
  `
  ALTER TABLE turnkit_turns ADD COLUMN trace_context jsonb;
  `,
  // Fewer bytes per turn. A turn's row is rewritten at each checkpoint and claim: no index names a
  // column those writes change (status, lease_owner), so Postgres updates the row in place (a HOT
  // update: no new index entries), and pages keep room for it (fillfactor). The state is stored
  // without what the row holds anyway (its id) or what never changes in a turn (its limits, kept in
  // state_limits once). The state and log rows keep their JSON as sent (json, smaller than jsonb).
  // A checkpoint appends its log entries as one row of kind 'entries' (one heap tuple and one index
  // entry, not one per message, notice and status); turnkit_log_entries lists every entry with its
  // own seq, whichever way it was written.
  `
  ALTER TABLE turnkit_turns SET (fillfactor = 70);
  ALTER TABLE turnkit_tool_results SET (fillfactor = 70);
  DROP INDEX turnkit_turns_status;
  DROP INDEX turnkit_turns_held;
  CREATE INDEX turnkit_turns_live ON turnkit_turns (agent) WHERE ended_at IS NULL;
  ALTER TABLE turnkit_turns ADD COLUMN state_limits jsonb;
  ALTER TABLE turnkit_log ALTER COLUMN data TYPE json USING data::json;
  ALTER TABLE turnkit_turns ALTER COLUMN state TYPE json USING state::json;
  ALTER TABLE turnkit_log DROP CONSTRAINT turnkit_log_kind_check;
  ALTER TABLE turnkit_log ADD CONSTRAINT turnkit_log_kind_check CHECK (kind IN ('message', 'notice', 'status', 'entries'));
  CREATE VIEW turnkit_log_entries AS
    SELECT turn_id, seq, kind, data, lease_token, at FROM turnkit_log WHERE kind <> 'entries'
    UNION ALL
    SELECT l.turn_id, l.seq + (e.n - 1)::int, e.value ->> 'kind', e.value -> 'data', l.lease_token, l.at
    FROM turnkit_log l CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n) WHERE l.kind = 'entries';
  `,
  // Fewer bytes per turn, again. Each entry of an 'entries' row may be a pair ["m" | "n" | "s",
  // data] (message, notice, status) instead of an object {"kind", "data"}; turnkit_log_entries reads
  // both. The log, journal and inbox rows keep their turn's id without a foreign key: a key check
  // locks the turn's row (a write-ahead log record) on every insert, and the store is the only
  // writer of these tables (it never deletes a turn; who deletes one deletes its rows in all four).
  // The turn's row is rebuilt with its columns in the order they change: what a turn never changes
  // first, then the lease (a claim changes it), then updated_at, status, counters, budget usage
  // and the state with its limits (a checkpoint changes these). Postgres logs an update in place from the first
  // changed byte to the last, so a claim or a checkpoint logs its own columns only. Pages keep
  // room for a row to grow from its insert to its end (fillfactor 30), so its updates stay in place.
  // The grants, the budget usage, the state's limits and a call's result keep their JSON as sent
  // (json: for these small values, jsonb's binary form is larger). The log and the journal name
  // their turn by its `seq` (8 bytes in each row and index entry, where an id takes up to 200);
  // turnkit_log_entries still gives each entry its turn's id.
  `
  ALTER TABLE turnkit_log DROP CONSTRAINT IF EXISTS turnkit_log_turn_id_fkey;
  ALTER TABLE turnkit_tool_results DROP CONSTRAINT IF EXISTS turnkit_tool_results_turn_id_fkey;
  ALTER TABLE turnkit_inbox DROP CONSTRAINT IF EXISTS turnkit_inbox_turn_id_fkey;
  ALTER SEQUENCE turnkit_turns_seq_seq OWNED BY NONE;
  CREATE TABLE turnkit_turns_next (
    id text PRIMARY KEY,
    seq bigint NOT NULL UNIQUE DEFAULT nextval('turnkit_turns_seq_seq'),
    agent text NOT NULL,
    input text,
    limits jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    trace_context jsonb,
    error jsonb,
    grants json NOT NULL DEFAULT '[]',
    ended_at timestamptz,
    runnable boolean NOT NULL DEFAULT true,
    lease_owner text,
    lease_token integer NOT NULL DEFAULT 0,
    lease_expires_at timestamptz,
    run_after timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    status text NOT NULL,
    version integer NOT NULL DEFAULT 0,
    log_seq integer NOT NULL DEFAULT 0,
    budget_usage json,
    state_limits json,
    state json
  ) WITH (fillfactor = 30);
  INSERT INTO turnkit_turns_next (id, seq, agent, input, limits, state_limits, created_at, trace_context, error, grants, ended_at,
      runnable, lease_owner, lease_token, lease_expires_at, run_after, updated_at, status, version, log_seq, budget_usage, state)
    SELECT id, seq, agent, input, limits, state_limits, created_at, trace_context, error, grants, ended_at,
      runnable, lease_owner, lease_token, lease_expires_at, run_after, updated_at, status, version, log_seq, budget_usage, state
    FROM turnkit_turns;
  DROP TABLE turnkit_turns;
  ALTER TABLE turnkit_turns_next RENAME TO turnkit_turns;
  ALTER SEQUENCE turnkit_turns_seq_seq OWNED BY turnkit_turns.seq;
  ALTER INDEX turnkit_turns_next_pkey RENAME TO turnkit_turns_pkey;
  ALTER INDEX turnkit_turns_next_seq_key RENAME TO turnkit_turns_seq_key;
  CREATE INDEX turnkit_turns_runnable ON turnkit_turns (seq) WHERE runnable;
  CREATE INDEX turnkit_turns_live ON turnkit_turns (agent) WHERE ended_at IS NULL;
  DROP VIEW turnkit_log_entries;
  CREATE TABLE turnkit_log_next (
    turn_seq bigint NOT NULL,
    seq integer NOT NULL,
    kind text NOT NULL CHECK (kind IN ('message', 'notice', 'status', 'entries')),
    lease_token integer,
    at timestamptz NOT NULL DEFAULT now(),
    data json NOT NULL,
    PRIMARY KEY (turn_seq, seq)
  );
  INSERT INTO turnkit_log_next (turn_seq, seq, kind, lease_token, at, data)
    SELECT t.seq, l.seq, l.kind, l.lease_token, l.at, l.data FROM turnkit_log l JOIN turnkit_turns t ON t.id = l.turn_id;
  DROP TABLE turnkit_log;
  ALTER TABLE turnkit_log_next RENAME TO turnkit_log;
  ALTER INDEX turnkit_log_next_pkey RENAME TO turnkit_log_pkey;
  CREATE TABLE turnkit_tool_results_next (
    turn_seq bigint NOT NULL,
    call_id text NOT NULL,
    name text NOT NULL,
    started_at timestamptz,
    started_token integer,
    finished_at timestamptz,
    result json,
    PRIMARY KEY (turn_seq, call_id)
  ) WITH (fillfactor = 70);
  INSERT INTO turnkit_tool_results_next (turn_seq, call_id, name, started_at, started_token, finished_at, result)
    SELECT t.seq, r.call_id, r.name, r.started_at, r.started_token, r.finished_at, r.result::json
    FROM turnkit_tool_results r JOIN turnkit_turns t ON t.id = r.turn_id;
  DROP TABLE turnkit_tool_results;
  ALTER TABLE turnkit_tool_results_next RENAME TO turnkit_tool_results;
  ALTER INDEX turnkit_tool_results_next_pkey RENAME TO turnkit_tool_results_pkey;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 = 'm' THEN 'message' WHEN e.value ->> 0 = 'n' THEN 'notice' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) = 'array' THEN e.value -> 1 ELSE e.value -> 'data' END,
      l.lease_token, l.at
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n) WHERE l.kind = 'entries';
  `,
  // Threads: turns that continue one conversation, one at a time. A thread's row keeps what its
  // turns share (its agent, the grants remembered in it, whether it is closed) and which of its
  // turns holds its latest compaction (`context_turn`), so a turn's context is read from there
  // on, not from the thread's first turn. A turn names its thread: the turn's row is rebuilt with
  // `thread` among the columns a turn never changes (its index then never stops an update in
  // place, and the state stays last: see the previous migration). A compaction is a log entry of its own
  // ("c": the transcript kept), written once; the messages it leaves out stay in the log.
  // turnkit_log_entries spells it 'compaction' and gives each entry its turn's seq too.
  `
  CREATE TABLE turnkit_threads (
    id text PRIMARY KEY,
    agent text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    closed_at timestamptz,
    close_reason text,
    context_turn bigint,
    grants json NOT NULL DEFAULT '[]'
  );
  DROP VIEW turnkit_log_entries;
  ALTER SEQUENCE turnkit_turns_seq_seq OWNED BY NONE;
  CREATE TABLE turnkit_turns_next (
    id text PRIMARY KEY,
    seq bigint NOT NULL UNIQUE DEFAULT nextval('turnkit_turns_seq_seq'),
    agent text NOT NULL,
    thread text,
    input text,
    limits jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    trace_context jsonb,
    error jsonb,
    grants json NOT NULL DEFAULT '[]',
    ended_at timestamptz,
    runnable boolean NOT NULL DEFAULT true,
    lease_owner text,
    lease_token integer NOT NULL DEFAULT 0,
    lease_expires_at timestamptz,
    run_after timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    status text NOT NULL,
    version integer NOT NULL DEFAULT 0,
    log_seq integer NOT NULL DEFAULT 0,
    budget_usage json,
    state_limits json,
    state json
  ) WITH (fillfactor = 30);
  INSERT INTO turnkit_turns_next (id, seq, agent, input, limits, state_limits, created_at, trace_context, error, grants, ended_at,
      runnable, lease_owner, lease_token, lease_expires_at, run_after, updated_at, status, version, log_seq, budget_usage, state)
    SELECT id, seq, agent, input, limits, state_limits, created_at, trace_context, error, grants, ended_at,
      runnable, lease_owner, lease_token, lease_expires_at, run_after, updated_at, status, version, log_seq, budget_usage, state
    FROM turnkit_turns;
  DROP TABLE turnkit_turns;
  ALTER TABLE turnkit_turns_next RENAME TO turnkit_turns;
  ALTER SEQUENCE turnkit_turns_seq_seq OWNED BY turnkit_turns.seq;
  ALTER INDEX turnkit_turns_next_pkey RENAME TO turnkit_turns_pkey;
  ALTER INDEX turnkit_turns_next_seq_key RENAME TO turnkit_turns_seq_key;
  CREATE INDEX turnkit_turns_runnable ON turnkit_turns (seq) WHERE runnable;
  CREATE INDEX turnkit_turns_live ON turnkit_turns (agent) WHERE ended_at IS NULL;
  CREATE INDEX turnkit_turns_thread ON turnkit_turns (thread, seq) WHERE thread IS NOT NULL;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 = 'm' THEN 'message' WHEN e.value ->> 0 = 'n' THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) = 'array' THEN e.value -> 1 ELSE e.value -> 'data' END,
      l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n) WHERE l.kind = 'entries';
  `,
  // A turn's input and a tool's output once, not twice. A checkpoint that appends the user message
  // { role: 'user', content } equal to the turn's `input` keeps an entry ["u"] instead (the view
  // reads it back from the turn's row), and one that appends a tool result message equal to the
  // result its call's journal row holds (compared as jsonb when it is written) keeps an entry
  // ["r", callId] instead: turnkit_log_entries reads that row back as the message
  // { role: 'tool', result } (the result with its `callId` and `name` put back, as rowResult does:
  // turnkit_journal_result), looked up by its key for each such entry (a subquery per entry: never
  // a join the planner could make a scan of the whole journal).
  // The journal's results and the log's entries stay in their rows up to a page (STORAGE MAIN):
  // moved out of line, a 2 KB value costs two TOAST chunks and their index entries, a quarter more
  // write-ahead log than the value itself. Large values still move out of line.
  `
  ALTER TABLE turnkit_tool_results ALTER COLUMN result SET STORAGE MAIN;
  ALTER TABLE turnkit_log ALTER COLUMN data SET STORAGE MAIN;
  CREATE FUNCTION turnkit_journal_result(call_id text, name text, result json) RETURNS json LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN json_typeof(result) <> 'object' OR result -> 'callId' IS NOT NULL THEN result
      WHEN NOT EXISTS (SELECT 1 FROM json_object_keys(result)) THEN json_build_object('callId', call_id, 'name', name)
      ELSE concat('{"callId":', to_json(call_id)::text, ',"name":', to_json(name)::text, ',', substr(ltrim(result::text), 2))::json END
  $$;
  DROP VIEW turnkit_log_entries;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 IN ('m', 'r', 'u') THEN 'message' WHEN e.value ->> 0 = 'n' THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value -> 'data'
           WHEN e.value ->> 0 = 'r' THEN (SELECT json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))
             FROM turnkit_tool_results j WHERE j.turn_seq = l.turn_seq AND j.call_id = e.value ->> 1)
           WHEN e.value ->> 0 = 'u' THEN json_build_object('role', 'user', 'content', t.input)
           ELSE e.value -> 1 END,
      l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n)
    WHERE l.kind = 'entries';
  `
];
var SCHEMA_VERSION = MIGRATIONS.length;

// src/schema/migrate.ts
var MIGRATION_LOCK = 7316420911;
async function migrate(sql) {
  return sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(
      "CREATE TABLE IF NOT EXISTS turnkit_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    );
    const [row] = await tx.query("SELECT coalesce(max(version), 0)::int AS version FROM turnkit_schema");
    const current = Number(row?.version ?? 0);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `This database has turnkit store schema version ${current}, newer than this @turnkit/store knows (${SCHEMA_VERSION}): upgrade @turnkit/store.`
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version += 1) {
      for (const statement of MIGRATIONS[version - 1].split(/;\s*\n/)) {
        if (statement.trim() !== "") await tx.query(statement);
      }
      await tx.query("INSERT INTO turnkit_schema (version) VALUES ($1)", [version]);
    }
    return SCHEMA_VERSION;
  });
}

// src/sql/claim.ts
var CAP_LOCK = 7316420912;
var RUNNABLE_NOW = `runnable AND (lease_expires_at IS NULL OR lease_expires_at <= now()) AND (run_after IS NULL OR run_after <= now())
  AND (thread IS NULL OR NOT EXISTS (SELECT 1 FROM turnkit_turns e
    WHERE e.thread = turnkit_turns.thread AND e.seq < turnkit_turns.seq AND e.ended_at IS NULL))`;
var CLAIM_SQL = `
WITH caps AS (SELECT key AS agent, value::int AS cap FROM jsonb_each_text($4::jsonb)),
room AS (
  SELECT c.agent, c.cap - (SELECT count(*) FROM turnkit_turns h
                           WHERE h.agent = c.agent AND h.lease_owner IS NOT NULL AND h.lease_expires_at > now())::int AS room
  FROM caps c
),
picked AS (
  SELECT id, agent, seq FROM turnkit_turns
  WHERE ${RUNNABLE_NOW} AND agent NOT IN (SELECT agent FROM room WHERE room <= 0) AND ($5::text[] IS NULL OR id = ANY($5::text[]))
  ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED
),
ranked AS (
  SELECT p.id, p.seq, row_number() OVER (PARTITION BY p.agent ORDER BY p.seq) AS n, r.room
  FROM picked p LEFT JOIN room r ON r.agent = p.agent
),
claimed AS (
  UPDATE turnkit_turns AS t SET lease_owner = $1, lease_token = t.lease_token + 1,
    lease_expires_at = now() + $2::int * interval '1 millisecond', run_after = NULL, updated_at = now()
  FROM ranked WHERE t.id = ranked.id AND (ranked.room IS NULL OR ranked.n <= ranked.room)
  RETURNING t.id, t.seq, t.thread, t.agent, t.input, t.limits, t.state, t.state_limits, t.grants, t.budget_usage, t.lease_token, t.version, t.status, t.log_seq, t.trace_context
)
SELECT c.*, floor(extract(epoch FROM now()) * 1000)::float8 AS db_now,
  (SELECT coalesce(max(l.seq), 0) FROM turnkit_log_entries l WHERE l.turn_id = c.id) AS logged,
  CASE WHEN c.thread IS NULL THEN (SELECT coalesce(json_agg(json_build_object('kind', l.kind, 'data', l.data) ORDER BY l.seq), '[]')
    FROM turnkit_log_entries l WHERE l.turn_id = c.id AND l.kind IN ('message', 'compaction')) END AS transcript,
  (SELECT th.grants FROM turnkit_threads th WHERE th.id = c.thread) AS thread_grants,
  (SELECT coalesce(json_agg(json_build_object('id', i.id::text, 'kind', i.kind, 'call_id', i.call_id, 'body', i.body) ORDER BY i.id), '[]')
   FROM turnkit_inbox i WHERE i.turn_id = c.id AND i.status = 'pending') AS pending
FROM claimed c`;
function checkCaps(caps) {
  for (const [agent, cap] of Object.entries(caps)) {
    if (typeof cap !== "number" || !Number.isInteger(cap) || cap < 1)
      throw new RangeError(`The cap of agent '${agent}' must be a whole number >= 1, got ${String(cap)}.`);
  }
  return JSON.stringify(caps);
}
async function claimTurns(sql, options) {
  const { owner, leaseMs, limit } = options;
  checkLeaseMs(leaseMs);
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`claim limit must be a whole number >= 1, got ${String(limit)}.`);
  const caps = checkCaps(options.caps ?? {});
  const turnIds = options.turnIds === void 0 ? null : [...options.turnIds];
  const params2 = [owner, leaseMs, limit, caps, turnIds];
  const rows = caps === "{}" ? await sql.query(CLAIM_SQL, params2) : await sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [CAP_LOCK]);
    return tx.query(CLAIM_SQL, params2);
  });
  if (rows.length === 0) return [];
  rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  const stale = rows.filter((r) => r.thread === null && Number(r.logged) !== Number(r.log_seq)).map((r) => String(r.id));
  const reread = stale.length === 0 ? /* @__PURE__ */ new Map() : await readTranscripts(sql, stale);
  for (const row of rows)
    if (row.thread !== null) reread.set(String(row.id), await readThreadContext(sql, String(row.thread), Number(row.seq)));
  return rows.map((row) => {
    const id = String(row.id);
    return {
      lease: { id, owner, token: Number(row.lease_token), version: Number(row.version), status: row.status },
      agent: String(row.agent),
      input: row.input ?? null,
      limits: row.limits ?? null,
      state: restoredState(row.id, row.state, row.state_limits),
      // A turn of a thread has what its thread remembered too.
      grants: [...row.thread_grants ?? [], ...row.grants ?? []],
      thread: row.thread ?? null,
      budgetUsage: row.budget_usage ?? null,
      // The messages, each compaction replacing what came before it with what it kept.
      transcript: reread.get(id) ?? contextOf(row.transcript ?? []),
      pending: (row.pending ?? []).map(toPending),
      traceContext: row.trace_context ?? null,
      now: Number(row.db_now)
    };
  });
}
async function readTranscripts(db, ids) {
  const rows = await db.query(
    `SELECT turn_id, kind, data FROM turnkit_log_entries WHERE turn_id = ANY($1::text[]) AND kind IN ('message', 'compaction') ORDER BY turn_id, seq`,
    [[...ids]]
  );
  const byTurn = /* @__PURE__ */ new Map();
  for (const r of rows) {
    const id = String(r.turn_id);
    byTurn.set(id, [...byTurn.get(id) ?? [], r]);
  }
  return new Map([...byTurn].map(([id, entries]) => [id, contextOf(entries)]));
}

// src/sql/commit.ts
function logRows(lease, commit) {
  const status = commit.fail !== void 0 ? "failed" : commit.state?.status ?? lease.status;
  const rows = [];
  if (commit.log !== void 0)
    for (const item of commit.log)
      rows.push("message" in item ? ["m", item.message] : "notice" in item ? ["n", item.notice] : ["c", item.compaction]);
  else {
    for (const m of commit.messages ?? []) rows.push(["m", m]);
    for (const n of commit.notices ?? []) rows.push(["n", n]);
  }
  if (status !== lease.status) {
    const outcome = commit.fail !== void 0 ? { status: "failed", error: commit.fail } : commit.state?.outcome ?? null;
    rows.push(["s", { status, outcome }]);
  }
  return { status, rows };
}
var json = (value) => value === void 0 ? null : JSON.stringify(value);
var SET_TURN = `
  state = coalesce($4::json, state), state_limits = coalesce($14::json, state_limits), status = $5::text, error = coalesce($6::jsonb, error),
  grants = coalesce($7::json, grants), budget_usage = coalesce($8::json, budget_usage),
  version = version + 1, log_seq = log_seq + $9::int, updated_at = now(),
  ended_at = CASE WHEN $10::bool THEN now() ELSE ended_at END,
  lease_owner = CASE WHEN $11::bool OR $10::bool THEN NULL ELSE lease_owner END,
  lease_expires_at = CASE WHEN $11::bool OR $10::bool THEN NULL ELSE lease_expires_at END,
  run_after = CASE WHEN $12::int IS NULL THEN run_after ELSE now() + $12::int * interval '1 millisecond' END,
  trace_context = coalesce($15::jsonb, trace_context)`;
var runnable = (p) => `runnable = CASE WHEN ${p.terminal}::bool THEN false
  WHEN ${p.release}::bool THEN (${p.status}::text <> 'awaiting_approval' OR ${p.wake} OR EXISTS (SELECT 1 FROM turnkit_inbox
    WHERE turn_id = ${p.id} AND status = 'pending' AND NOT (id = ANY(${p.applied}::bigint[]))))
  ELSE runnable END`;
var APPEND_LOG = `INSERT INTO turnkit_log (turn_seq, seq, kind, data, lease_token)
  SELECT t.seq, t.log_seq - $9::int + 1, 'entries',
    (SELECT json_agg(CASE WHEN e.value ->> 0 = 'm' AND e.value #>> '{1,role}' = 'user' AND t.input IS NOT NULL
         AND (e.value -> 1)::jsonb = json_build_object('role', 'user', 'content', t.input)::jsonb THEN '["u"]'::json
       WHEN e.value ->> 0 = 'm' AND e.value #>> '{1,role}' = 'tool' AND EXISTS (SELECT 1 FROM turnkit_tool_results j
         WHERE j.turn_seq = t.seq AND j.call_id = e.value #>> '{1,result,callId}'
           AND (e.value -> 1)::jsonb = json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))::jsonb)
       THEN json_build_array('r', e.value #>> '{1,result,callId}') ELSE e.value END ORDER BY e.n)
     FROM json_array_elements($13::json) WITH ORDINALITY AS e(value, n)),
    $2::int FROM t WHERE $9::int > 0`;
var threadSql = (grants, compacted) => `UPDATE turnkit_threads th SET grants = coalesce(${grants}::json, th.grants),
    context_turn = CASE WHEN ${compacted}::bool THEN t.seq ELSE th.context_turn END
  FROM t WHERE th.id = t.thread AND th.closed_at IS NULL AND (${grants}::json IS NOT NULL OR ${compacted}::bool)`;
var nextInThreadSql = (terminal) => `SELECT pg_notify(${CHANNEL_SQL}, n.id) FROM t JOIN LATERAL (
    SELECT id FROM turnkit_turns WHERE thread = t.thread AND ended_at IS NULL AND seq > t.seq ORDER BY seq LIMIT 1) n ON true
  WHERE ${terminal}::bool AND t.thread IS NOT NULL`;
var CHECKPOINT_SQL = `
WITH seen AS (SELECT xmin FROM turnkit_turns WHERE id = $1),
t AS (
  UPDATE turnkit_turns SET ${SET_TURN}, ${runnable({ id: "$1", status: "$5", terminal: "$10", release: "$11", applied: "$16", wake: "$12::int IS NOT NULL" })}
  WHERE id = $1 AND lease_token = $2::int AND version = $3::int AND xmin = (SELECT xmin FROM seen)
  RETURNING seq, version, log_seq, runnable, run_after, thread, input
),
log AS (${APPEND_LOG}),
thread AS (${threadSql("$19", "$20")}),
inbox AS (
  UPDATE turnkit_inbox SET status = CASE WHEN id = ANY($16::bigint[]) AND NOT id = ANY($18::bigint[]) THEN 'applied' ELSE 'ignored' END, applied_at = now()
  WHERE turn_id = $1 AND status = 'pending' AND (id = ANY($16::bigint[]) OR $10::bool) AND EXISTS (SELECT 1 FROM t)
),
durability AS (SELECT set_config('synchronous_commit', 'off', true) FROM t WHERE NOT ($10::bool OR $11::bool))
SELECT t.version,
  CASE WHEN $11::bool AND NOT $10::bool AND t.runnable AND t.run_after IS NULL THEN pg_notify(${CHANNEL_SQL}, $1) END AS woke,
  CASE WHEN $17::text[] IS NULL THEN NULL ELSE (SELECT coalesce(json_agg(json_build_object('call_id', j.call_id, 'name', j.name, 'result', j.result)), '[]')
    FROM turnkit_tool_results j WHERE j.turn_seq = t.seq AND j.call_id = ANY($17::text[])) END AS journal,
  (SELECT count(*) FROM durability) AS relaxed,
  (SELECT count(*) FROM (${nextInThreadSql("$10")}) n) AS next_woken
FROM t`;
function params(lease, commit, status, rows) {
  const batch = commit.state?.batch;
  const stored = storedState(commit.state);
  return [
    lease.id,
    lease.token,
    lease.version,
    stored.state,
    status,
    json(commit.fail),
    json(commit.grants),
    json(commit.budgetUsage),
    rows.length,
    TERMINAL.has(status),
    commit.release === true,
    commit.retryAfterMs ?? null,
    JSON.stringify(rows),
    stored.limits,
    commit.traceContext ?? null,
    commit.applied ?? [],
    batch === null || batch === void 0 ? null : batch.calls.map((c) => c.id),
    commit.ignored ?? [],
    json(commit.threadGrants),
    commit.log?.some((item) => "compaction" in item) === true
  ];
}
async function checkpointInSteps(tx, lease, values) {
  const update = `UPDATE turnkit_turns SET ${SET_TURN} WHERE id = $1 AND lease_token = $2::int AND version = $3::int RETURNING seq, version, log_seq, thread, input`;
  const [row] = await tx.query(`WITH t AS (${update}), log AS (${APPEND_LOG}) SELECT version FROM t`, values.slice(0, 15));
  if (row === void 0) {
    const [current] = await tx.query("SELECT lease_token FROM turnkit_turns WHERE id = $1", [lease.id]);
    throw current !== void 0 && Number(current.lease_token) === lease.token ? new ConflictError(lease.id) : new LeaseLostError(lease.id);
  }
  const [id, , , , status, , , , , terminal, release, wakeAfterMs, , , , applied, , skipped, threadGrants, compacted] = values;
  await tx.query(
    `WITH t AS (SELECT seq, thread FROM turnkit_turns WHERE id = $1), thread AS (${threadSql("$2", "$3")})
     SELECT (SELECT count(*) FROM (${nextInThreadSql("$4")}) n) AS next_woken`,
    [id, threadGrants, compacted, terminal]
  );
  await tx.query(
    `WITH inbox AS (
       UPDATE turnkit_inbox SET status = CASE WHEN id = ANY($5::bigint[]) AND NOT id = ANY($6::bigint[]) THEN 'applied' ELSE 'ignored' END, applied_at = now()
       WHERE turn_id = $1 AND status = 'pending' AND (id = ANY($5::bigint[]) OR $3::bool)),
     t AS (UPDATE turnkit_turns SET ${runnable({ id: "$1", status: "$2", terminal: "$3", release: "$4", applied: "$5", wake: "$7::bool" })}
           WHERE id = $1 AND ($3::bool OR $4::bool) RETURNING runnable, run_after)
     SELECT pg_notify(${CHANNEL_SQL}, $1) FROM t WHERE $4::bool AND NOT $3::bool AND t.runnable AND t.run_after IS NULL`,
    [id, status, terminal, release, applied, skipped, wakeAfterMs !== null]
  );
  return Number(row.version);
}
async function commitTurn(sql, lease, commit) {
  if (commit.retryAfterMs !== void 0) checkLeaseMs(commit.retryAfterMs, "retryAfterMs");
  const { status, rows } = logRows(lease, commit);
  const values = params(lease, commit, status, rows);
  const [row] = await sql.query(CHECKPOINT_SQL, values);
  let journal = null;
  if (row !== void 0) {
    lease.version = Number(row.version);
    if (row.journal !== null && row.journal !== void 0) journal = toJournalRead(row.journal);
  } else {
    lease.version = await sql.transaction((tx) => checkpointInSteps(tx, lease, values));
  }
  lease.status = status;
  return journal;
}

// src/sql/journal-call.ts
function storedResult(result) {
  const { callId: _callId, name: _name, ...rest } = result;
  return { lean: JSON.stringify(rest), full: JSON.stringify(result) };
}
async function fencedWrite(db, lease, call, write, params2) {
  const [row] = await db.query(
    `WITH held AS (SELECT seq FROM turnkit_turns WHERE id = $1 AND lease_token = $2::int FOR KEY SHARE),
     updated AS (UPDATE turnkit_tool_results SET ${write.set}
       WHERE turn_seq = (SELECT seq FROM held) AND call_id = $3::text AND result IS NULL RETURNING call_id),
     inserted AS (INSERT INTO turnkit_tool_results (turn_seq, call_id, name, ${write.columns})
       SELECT seq, $3::text, $4::text, ${write.values} FROM held
       WHERE NOT EXISTS (SELECT 1 FROM turnkit_tool_results j WHERE j.turn_seq = held.seq AND j.call_id = $3::text) RETURNING call_id)
     SELECT (SELECT count(*) FROM held)::int AS held,
       ((SELECT count(*) FROM updated) + (SELECT count(*) FROM inserted))::int AS written`,
    [lease.id, lease.token, call.id, call.name, ...params2]
  );
  if (Number(row?.held ?? 0) === 0) throw new LeaseLostError(lease.id);
  return Number(row?.written ?? 0) > 0;
}
async function journalStart(db, lease, call) {
  await fencedWrite(
    db,
    lease,
    call,
    { set: "started_at = now(), started_token = $2::int", columns: "started_at, started_token", values: "now(), $2::int" },
    []
  );
}
async function journalResult(db, lease, result) {
  const stored = storedResult(result);
  return fencedWrite(
    db,
    lease,
    { id: result.callId, name: result.name },
    {
      // The row's name is the call's (from its start) or this result's (inserted here): the result keeps a name that differs.
      set: "result = CASE WHEN name = $4::text THEN $5::json ELSE $6::json END, finished_at = now()",
      columns: "result, finished_at",
      values: "$5::json, now()"
    },
    [stored.lean, stored.full]
  );
}

// src/sql/next-due.ts
async function nextDue(db, what) {
  const [row] = await db.query(
    what === "retries" ? `SELECT ceil(extract(epoch FROM min(run_after) - now()) * 1000)::float8 AS ms FROM turnkit_turns
         WHERE runnable AND run_after > now() AND status <> 'awaiting_approval'` : `SELECT ceil(extract(epoch FROM min(greatest(coalesce(run_after, '-infinity'), coalesce(lease_expires_at, '-infinity'))) - now()) * 1000)::float8 AS ms
         FROM turnkit_turns WHERE runnable AND (run_after > now() OR lease_expires_at > now())`
  );
  const ms = row?.ms;
  return ms === null || ms === void 0 ? null : Math.max(0, Number(ms));
}

// src/sql/pending-inbox.ts
async function pendingInbox(db, lease) {
  const rows = await db.query(
    `SELECT id::text AS id, kind, call_id, body FROM turnkit_inbox WHERE turn_id = $1 AND status = 'pending' ORDER BY id`,
    [lease.id]
  );
  return rows.map(toPending);
}

// src/sql/read-journal.ts
async function readJournal(db, lease, callIds) {
  const rows = await db.query(
    `SELECT call_id, name, result FROM turnkit_tool_results WHERE turn_seq = (SELECT seq FROM turnkit_turns WHERE id = $1) AND call_id = ANY($2::text[])`,
    [lease.id, [...callIds]]
  );
  return toJournalRead(rows);
}

// src/sql/release.ts
async function releaseLease(db, lease) {
  const rows = await db.query(
    `WITH t AS (UPDATE turnkit_turns SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
                WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL RETURNING id, runnable, run_after)
     SELECT runnable, pg_notify(${CHANNEL_SQL}, id) FROM t WHERE t.runnable AND t.run_after IS NULL`,
    [lease.id, lease.token]
  );
  return rows.length > 0;
}

// src/sql/renew.ts
async function renewLease(db, lease, leaseMs) {
  checkLeaseMs(leaseMs);
  const rows = await db.query(
    `UPDATE turnkit_turns SET lease_expires_at = now() + $3::int * interval '1 millisecond' WHERE id = $1 AND lease_token = $2 RETURNING id`,
    [lease.id, lease.token, leaseMs]
  );
  if (rows.length === 0) throw new LeaseLostError(lease.id);
}

// src/worker/leases.ts
function createLeases(db, wakeups2) {
  const known = new KnownReads();
  return {
    claim: async (options) => known.claimed(await claimTurns(db(), { ...options, limit: 1 }))[0] ?? null,
    claimMany: async (options) => known.claimed(await claimTurns(db(), options)),
    release: async (lease) => {
      await releaseLease(db(), lease);
      wakeups2.wake();
    },
    nextDue: async (what = "any") => nextDue(db(), what),
    listen: (handlers) => wakeups2.listen(handlers),
    renew: async (lease, leaseMs) => renewLease(db(), lease, leaseMs),
    commit: async (lease, commit) => {
      known.forget(lease);
      const journal = await commitTurn(db(), lease, commit);
      known.committed(lease, commit, journal);
      wakeups2.wake(commit.release === true && commit.retryAfterMs === void 0);
    },
    pendingInbox: async (lease) => known.takeInbox(lease) ?? pendingInbox(db(), lease),
    journal: async (lease, callIds) => known.takeJournal(lease, callIds) ?? readJournal(db(), lease, callIds),
    callStarted: async (lease, call) => {
      known.forget(lease);
      await journalStart(db(), lease, call);
    },
    callFinished: async (lease, result) => {
      known.forget(lease);
      return journalResult(db(), lease, result);
    }
  };
}
var KnownReads = class {
  inbox = /* @__PURE__ */ new WeakMap();
  journals = /* @__PURE__ */ new WeakMap();
  claimed(claims) {
    for (const claim of claims) this.inbox.set(claim.lease, claim.pending);
    return claims;
  }
  committed(lease, commit, journal) {
    const calls = commit.state?.batch?.calls;
    if (journal !== null && calls !== void 0)
      this.journals.set(lease, { callIds: new Set(calls.map((c) => c.id)), read: journal });
  }
  forget(lease) {
    this.journals.delete(lease);
    this.inbox.delete(lease);
  }
  /** The claim's inbox rows, until the lease's first write (a worker takes each row once: it keeps what it took). */
  takeInbox(lease) {
    const rows = this.inbox.get(lease);
    return rows === void 0 ? null : [...rows];
  }
  takeJournal(lease, callIds) {
    const known = this.journals.get(lease);
    this.journals.delete(lease);
    if (known === void 0 || !callIds.every((id) => known.callIds.has(id))) return null;
    const wanted = new Set(callIds);
    return {
      results: known.read.results.filter((r) => wanted.has(r.callId)),
      started: known.read.started.filter((id) => wanted.has(id))
    };
  }
};

// src/open.ts
async function openUrl(url2, schema2, load) {
  if (url2 !== void 0 && (typeof url2 !== "string" || url2 === ""))
    throw new TypeError(`openStore takes 'memory://', 'postgres://\u2026', a directory, or nothing; got ${JSON.stringify(url2)}.`);
  if (url2 === void 0) return openPGlite("./.turnkit", schema2, load);
  if (url2 === "memory://") return openPGlite(void 0, schema2, load);
  if (/^postgres(ql)?:\/\//.test(url2)) return openPostgres(url2, schema2, load);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url2) && !url2.startsWith("file://")) {
    throw new TypeError(
      `openStore does not know the URL scheme of ${JSON.stringify(url2)}: use 'memory://', 'postgres://\u2026', a directory, or nothing.`
    );
  }
  return openPGlite(url2.startsWith("file://") ? new URL(url2).pathname : url2, schema2, load);
}
async function openSql(url2, options = {}) {
  armedCrash();
  const schema2 = options.schema === void 0 ? void 0 : checkSchemaName(options.schema);
  const retryMs = options.retryMs ?? OPEN_RETRY_MS;
  if (typeof retryMs !== "number" || !Number.isFinite(retryMs) || retryMs < 0)
    throw new RangeError(`openStore option \`retryMs\` must be a number of milliseconds >= 0, got ${String(retryMs)}.`);
  const started = Date.now();
  for (; ; ) {
    try {
      return await openAndMigrate(url2, schema2, options.load);
    } catch (error) {
      if (!restarting(error) || Date.now() - started >= retryMs) throw error;
      await new Promise((resolve3) => setTimeout(resolve3, 200));
    }
  }
}
var OPEN_RETRY_MS = 1e4;
function restarting(error) {
  const code = error?.code;
  if (typeof code === "string") return code.startsWith("57P") || code === "ECONNREFUSED" || code === "ECONNRESET";
  const message = error instanceof Error ? error.message : "";
  return CONNECTION_LOST.some((text) => message.includes(text));
}
var CONNECTION_LOST = ["Connection terminated unexpectedly", "Client has encountered a connection error and is not queryable"];
async function openAndMigrate(url2, schema2, load) {
  const sql = await openUrl(url2, schema2, load);
  try {
    await migrate(sql);
  } catch (error) {
    await sql.close().catch(() => void 0);
    throw error;
  }
  return sql;
}
function createStore(sql) {
  let closed = false;
  const db = () => {
    if (closed) throw new Error("This store is closed; open a new one with openStore().");
    return sql;
  };
  const wake = wakeups(sql, db);
  return {
    kind: sql.kind,
    ...createClient(db, wake),
    ...createLeases(db, wake),
    async close() {
      if (closed) return;
      closed = true;
      wake.clear();
      await sql.close();
    }
  };
}

// src/worker/worker.ts
import { randomUUID as randomUUID3 } from "node:crypto";
import { createTurn as createTurn3 } from "@turnkit/core";

// src/worker/loop.ts
import { definedProps as definedProps4 } from "@turnkit/core/internal";

// src/worker/activation.ts
import { createTurn as createTurn2, isTerminal as isTerminal3, parseTurnState as parseTurnState3, resume } from "@turnkit/core";
import { createDispatcher } from "@turnkit/dispatch";
import { definedProps as definedProps3, layerLimits } from "@turnkit/core/internal";
import { driveTurn } from "@turnkit/inline/driver";

// src/worker/protocol.ts
function openHold(turnId2, token) {
  return { turnId: turnId2, token, lost: null, consumed: [], unwritten: [], cancelRow: null };
}
function claimLimit(worker) {
  return worker.stopping ? 0 : Math.max(0, worker.concurrency - worker.held);
}
function protocolStep(hold, event) {
  switch (event.type) {
    case "inbox_read":
      return takeInbox(hold, event.rows, event.parked);
    case "journal_read":
      return [hold, hold.lost !== null ? [{ type: "stop" }] : journalDecisions(hold, event)];
    case "call_starting":
      return [
        hold,
        hold.lost !== null ? [{ type: "stop" }] : [{ type: "journal_start", callId: event.callId, token: hold.token }]
      ];
    case "start_journaled":
      return [hold, hold.lost !== null ? [{ type: "stop" }] : [{ type: "run_tool", callId: event.callId }]];
    case "tool_finished":
      return [hold, hold.lost !== null ? [] : [{ type: "write_result", callId: event.callId, token: hold.token }]];
    case "write":
      if (hold.lost !== null) return [hold, [{ type: "stop" }]];
      if (event.derivable === true && !event.terminal && !event.release && hold.unwritten.length === 0)
        return [hold, [{ type: "skip_write" }]];
      return [hold, [commitEffect(hold, event.terminal, event.release)]];
    case "committed": {
      const unwritten = hold.unwritten.filter((id) => !event.applied.includes(id));
      const cancelRow = hold.cancelRow !== null && event.applied.includes(hold.cancelRow) ? null : hold.cancelRow;
      return [{ ...hold, unwritten, cancelRow }, []];
    }
    case "lost":
      return [hold.lost === null ? { ...hold, lost: event.reason } : hold, [{ type: "stop" }]];
    case "drive_ended":
      return departure(hold, event.terminal);
  }
}
function commitEffect(hold, terminal, release) {
  const applied = terminal && hold.cancelRow !== null ? [...hold.unwritten, hold.cancelRow] : [...hold.unwritten];
  return { type: "commit", token: hold.token, applied, release };
}
function takeInbox(hold, rows, parked) {
  if (hold.lost !== null) return [hold, []];
  const fresh = rows.filter((r) => !hold.consumed.includes(r.id));
  const cancel = fresh.find((r) => r.kind === "cancel");
  if (cancel !== void 0) {
    return [
      { ...hold, consumed: [...hold.consumed, cancel.id], cancelRow: cancel.id },
      [{ type: "take_cancel", row: cancel.id }]
    ];
  }
  if (!parked) return [hold, []];
  const decisions = fresh.filter((r) => r.kind === "decision" && r.callId !== null).map((r) => r.id);
  if (decisions.length === 0) return [hold, []];
  return [
    { ...hold, consumed: [...hold.consumed, ...decisions], unwritten: [...hold.unwritten, ...decisions] },
    [{ type: "apply_decisions", rows: decisions }]
  ];
}
function journalDecisions(hold, event) {
  return event.calls.map((call) => {
    if (event.results.includes(call.id)) return { type: "use_result", callId: call.id };
    if (event.started.includes(call.id) && !call.idempotent)
      return { type: "write_interrupted", callId: call.id, token: hold.token };
    return { type: "run_call", callId: call.id };
  });
}
function departure(hold, terminal) {
  switch (hold.lost) {
    case "retry":
      return [
        { ...hold, unwritten: [] },
        [
          { type: "park_retry", token: hold.token, applied: [...hold.unwritten] },
          { type: "depart", how: "retry" }
        ]
      ];
    case "handed_back":
      return [
        hold,
        [
          { type: "release", token: hold.token },
          { type: "depart", how: "handed_back" }
        ]
      ];
    case "database":
      return [
        hold,
        [
          { type: "release", token: hold.token },
          { type: "depart", how: "lost" }
        ]
      ];
    case "fenced_out":
      return [hold, [{ type: "depart", how: "lost" }]];
    case null:
      return [hold, [{ type: "depart", how: terminal ? "finished" : "parked" }]];
  }
}

// src/worker/fence.ts
var HandedBack = class extends Error {
  constructor(turnId2) {
    super(`Turn '${turnId2}' was handed back: its worker is stopping and the drain deadline passed.`);
    this.turnId = turnId2;
    this.name = "HandedBack";
  }
  turnId;
};
var RetryParked = class extends Error {
  constructor(turnId2, delayMs) {
    super(`Turn '${turnId2}' waits ${delayMs} ms in the database before its model call is retried.`);
    this.turnId = turnId2;
    this.delayMs = delayMs;
    this.name = "RetryParked";
  }
  turnId;
  delayMs;
};
var DatabaseFault = class extends Error {
  constructor(turnId2, cause) {
    super(`Turn '${turnId2}' stopped in this worker: a database call failed (${messageOf(cause)}).`);
    this.turnId = turnId2;
    this.cause = cause;
    this.name = "DatabaseFault";
  }
  turnId;
  cause;
};
function lostReason(error) {
  if (error instanceof HandedBack) return "handed_back";
  if (error instanceof RetryParked) return "retry";
  if (error instanceof DatabaseFault) return "database";
  return "fenced_out";
}
var Fence = class {
  constructor(store, lease, report) {
    this.store = store;
    this.lease = lease;
    this.report = report;
    this.hold = openHold(lease.id, lease.token);
  }
  store;
  lease;
  report;
  cancellation = new AbortController();
  /** The error that made this worker stop working on the turn (the protocol's `hold.lost` says why). */
  lost = null;
  /** The protocol's hold on the turn. */
  hold;
  /** Feeds the protocol an event; returns the effects to perform. */
  decide(event) {
    const [hold, effects] = protocolStep(this.hold, event);
    this.hold = hold;
    return effects;
  }
  /** Stops the turn's work in this worker: the turn belongs to another writer now. */
  lose(error) {
    if (this.lost === null) this.lost = error;
    for (const effect of this.decide({ type: "lost", reason: lostReason(error) })) {
      if (effect.type === "stop") this.cancellation.abort(error.message);
    }
  }
  /** The lease to write with for an effect fenced on `token`: the protocol never asks for an unfenced write. */
  fencedLease(token) {
    if (token !== this.lease.token)
      throw new Error(
        `Refusing a write of turn '${this.lease.id}' fenced on token ${String(token)}: the worker holds token ${this.lease.token}.`
      );
    return this.lease;
  }
  /** Trips the fence for a fenced-out error; true when it was one. */
  caught(error) {
    if (!isFencedOut(error)) return false;
    this.lose(error);
    return true;
  }
  /** Throws the error that lost the turn, if one did. */
  check() {
    if (this.hold.lost !== null) throw this.lost ?? new Error(`Turn '${this.lease.id}' left this worker (${this.hold.lost}).`);
  }
  /** Runs a database call for the turn; any failure trips the fence and is rethrown. */
  async write(work) {
    this.check();
    try {
      return await work();
    } catch (error) {
      if (!this.caught(error)) this.lose(new DatabaseFault(this.lease.id, error));
      throw error;
    }
  }
};

// src/worker/held-turn.ts
import {
  approvalDeadline,
  decisionsTaken,
  isTerminal as isTerminal2
} from "@turnkit/core";
import { definedProps as definedProps2 } from "@turnkit/core/internal";
import { defaultHandlers } from "@turnkit/inline/driver";

// src/worker/observe.ts
var MAX_TRACE_CONTEXT = 4096;
function traceContextText(observer, saved, report) {
  if (observer?.traceContext === void 0) return void 0;
  let text;
  try {
    text = JSON.stringify(observer.traceContext());
  } catch (error) {
    report(
      new Error(
        `observe: traceContext() failed or is not JSON (${error instanceof Error ? error.message : String(error)}); it was not saved.`
      )
    );
    return void 0;
  }
  if (text === void 0 || text === saved) return void 0;
  if (text.length > MAX_TRACE_CONTEXT) {
    report(
      new Error(
        `observe: traceContext() returned ${text.length} characters of JSON, more than ${MAX_TRACE_CONTEXT}; it was not saved.`
      )
    );
    return void 0;
  }
  return text;
}

// src/worker/tool-journal.ts
import { definedProps } from "@turnkit/core/internal";
var INTERRUPTED = "interrupted: the worker running this call stopped before it reported a result, and the tool is not marked idempotent, so it was not run again.";
function journalingTools(tools2, fence) {
  return tools2.map((tool) => ({
    ...tool,
    async execute(input, toolCtx) {
      try {
        await startCall(fence, { id: toolCtx.callId, name: tool.name });
      } catch (error) {
        throw new Error(`the call was not started: its start could not be journaled (${messageOf(error)})`);
      }
      const running = Promise.resolve(tool.execute(input, toolCtx));
      if (crashArmed("tool_running")) {
        const timer = setTimeout(() => crashPoint("tool_running"), TOOL_RUNNING_MS);
        void running.finally(() => clearTimeout(timer)).catch(() => void 0);
      }
      return running;
    }
  }));
}
async function startCall(fence, call) {
  for (const effect of fence.decide({ type: "call_starting", callId: call.id })) {
    if (effect.type === "journal_start") await fence.write(() => fence.store.callStarted(fence.fencedLease(effect.token), call));
  }
  if (!fence.decide({ type: "start_journaled", callId: call.id }).some((e) => e.type === "run_tool")) fence.check();
}
async function fromJournal(calls, fence, idempotent) {
  const { store, lease } = fence;
  const { results, started } = await fence.write(
    () => store.journal(
      lease,
      calls.map((c) => c.id)
    )
  );
  const known = new Map(results.map((r) => [r.callId, r]));
  const byId = new Map(calls.map((c) => [c.id, c]));
  const toRun = [];
  const effects = fence.decide({
    type: "journal_read",
    calls: calls.map((c) => ({ id: c.id, idempotent: idempotent.has(c.name) })),
    results: [...known.keys()],
    started
  });
  for (const effect of effects) {
    if (effect.type === "stop") fence.check();
    const call = "callId" in effect ? byId.get(effect.callId) : void 0;
    if (call === void 0) continue;
    if (effect.type === "run_call") toRun.push(call);
    else if (effect.type === "write_interrupted") {
      const result = { callId: call.id, name: call.name, output: INTERRUPTED, isError: true };
      await fence.write(() => store.callFinished(fence.fencedLease(effect.token), result));
      known.set(call.id, result);
    }
  }
  return { known: calls.flatMap((c) => known.get(c.id) ?? []), toRun };
}
async function runJournaledBatch(calls, approved, ctx, fence, dispatcher, idempotent) {
  const { known, toRun } = await fromJournal(calls, fence, idempotent);
  const writes = [];
  const onResult = (result) => {
    for (const effect of fence.decide({ type: "tool_finished", callId: result.callId })) {
      if (effect.type !== "write_result") continue;
      const written = fence.write(() => fence.store.callFinished(fence.fencedLease(effect.token), result)).then(
        (first) => first && crashPoint("tool_result_written"),
        // The fence is tripped: the batch ends with fence.check() below.
        () => void 0
      );
      writes.push(written);
    }
  };
  const records = [];
  const dispatchCtx = {
    turnId: fence.lease.id,
    signal: fence.cancellation.signal,
    onResult,
    onRecord: (record) => records.push(record),
    transcript: ctx.transcript,
    ...definedProps({ context: ctx.context })
  };
  const audit = () => records.length === 0 ? {} : { records };
  if (approved) {
    const ran = toRun.length === 0 ? [] : await dispatcher.executeApproved(toRun, dispatchCtx);
    await Promise.all(writes);
    fence.check();
    return { type: "approved_tools_completed", results: [...known, ...ran], ...audit() };
  }
  const outcome = toRun.length === 0 ? { results: [], parked: [] } : await dispatcher.dispatch(toRun, dispatchCtx);
  await Promise.all(writes);
  fence.check();
  const held = [...known, ...outcome.results];
  return outcome.parked.length > 0 ? { type: "tools_parked", held, parked: outcome.parked, ...audit() } : { type: "tools_completed", results: held, ...audit() };
}

// src/worker/held-turn.ts
var MAX_WAIT_MS = 2147483647;
var HeldTurn = class {
  constructor(fence, agent, dispatcher, observer = null, claimedTrace = null, claimedAt = Date.now(), thread = null) {
    this.fence = fence;
    this.agent = agent;
    this.dispatcher = dispatcher;
    this.observer = observer;
    this.thread = thread;
    this.threadGrants = JSON.stringify(dispatcher.grants());
    this.savedTrace = claimedTrace === null ? null : JSON.stringify(claimedTrace);
    const started = performance.now();
    this.clock = () => Math.floor(claimedAt + (performance.now() - started));
    this.idempotent = new Set((agent.tools ?? []).filter((t) => t.idempotent).map((t) => t.name));
  }
  fence;
  agent;
  dispatcher;
  observer;
  thread;
  /** The messages and notices not yet written, in the order the turn made them. */
  unwritten = [];
  /** The thread's grants as last read or written (JSON), so unchanged ones are not written again. */
  threadGrants;
  /** Inbox rows taken for core that core did not apply, for the next commit to mark `ignored`. */
  ignoredRows = [];
  idempotent;
  /** The state after the last step (what a retry parks). */
  latest = null;
  /** A model call's retry, parked in the database instead of waited for here. */
  retry = null;
  /** The turn's time (epoch ms, the database's clock): when a batch parks, and whether an approval is due. */
  clock;
  /** The trace context as last saved (JSON text), so an unchanged one is not written again. */
  savedTrace;
  traceRefused = false;
  /**
   * Writes `current` with everything since the last write; `release` gives the lease back. A
   * `derivable` state may be skipped (the protocol decides): its messages and notices wait for the
   * next write.
   */
  async write(current, release, derivable = false) {
    const effects = this.fence.decide({ type: "write", terminal: isTerminal2(current), release, derivable });
    if (effects.some((e) => e.type === "skip_write")) return;
    const commit = effects.find((e) => e.type === "commit");
    if (commit === void 0) {
      this.fence.check();
      throw new Error(`The protocol refused a write of turn '${this.fence.lease.id}' that it did not lose.`);
    }
    const log = this.unwritten.splice(0);
    const { store } = this.fence;
    const lease = this.fence.fencedLease(commit.token);
    crashPoint("before_commit");
    const deadline = release ? approvalDeadline(current) : null;
    const wake = deadline === null ? {} : { retryAfterMs: Math.min(Math.max(1, deadline - this.clock()), MAX_WAIT_MS) };
    await this.fence.write(
      () => store.commit(lease, {
        state: current,
        log,
        ...wake,
        applied: [...commit.applied],
        ignored: this.ignoredRows.splice(0),
        ...this.grants(lease.id),
        budgetUsage: this.dispatcher.budgetUsage(),
        release,
        ...this.traceContext()
      })
    );
    this.fence.decide({ type: "committed", applied: commit.applied });
  }
  /**
   * The claim's grants (for this turn's dispatcher) and those given during this run, which belong
   * to the turn, or to its thread as a session's do; a thread keeps them when they changed.
   */
  grants(turnId2) {
    const scope = this.thread === null ? { turnId: turnId2 } : { turnId: turnId2, session: this.thread };
    const grants = [...this.dispatcher.grants(), ...this.dispatcher.grants(scope)];
    if (this.thread === null) return { grants };
    const text = JSON.stringify(grants);
    if (text === this.threadGrants) return { grants };
    this.threadGrants = text;
    return { grants, threadGrants: grants };
  }
  /** The observer's trace context for the next write, when it changed since the last one. */
  traceContext() {
    if (this.traceRefused) return {};
    const text = traceContextText(this.observer, this.savedTrace, (e) => {
      this.traceRefused = true;
      this.fence.report(e, this.fence.lease.id);
    });
    if (text === void 0) return {};
    this.savedTrace = text;
    return { traceContext: text };
  }
  /** Tells the observer the activation is over (once; a fault in it is reported). */
  endActivation(status) {
    const observer = this.observer;
    if (observer?.end === void 0) return;
    try {
      observer.end({ status });
    } catch (error) {
      this.fence.report(error, this.fence.lease.id);
    }
  }
  /**
   * Sees each effect before the driver performs it. A model call core marked as a retry after a
   * wait is not waited for here: the drive stops (nothing more is written by it) and
   * `parkRetry` writes the state with the time the turn may run again.
   */
  onEffect(effect) {
    if (effect.type !== "call_llm" || this.latest === null || this.retry !== null) return;
    const delayMs = effect.request.delayMs ?? 0;
    if (delayMs <= 0) return;
    this.retry = { state: this.latest, delayMs, log: this.unwritten.splice(0) };
    this.fence.lose(new RetryParked(this.fence.lease.id, delayMs));
  }
  /** Writes the retry `onEffect` parked (the state before the wait) and gives the turn back until it is due. */
  async parkRetry(effect) {
    const retry = this.retry;
    if (retry === null) throw new Error("parkRetry: no retry was parked");
    const lease = this.fence.fencedLease(effect.token);
    crashPoint("before_commit");
    await this.fence.store.commit(lease, {
      state: retry.state,
      log: retry.log,
      applied: [...effect.applied],
      ...this.grants(lease.id),
      budgetUsage: this.dispatcher.budgetUsage(),
      release: true,
      retryAfterMs: retry.delayMs,
      ...this.traceContext()
    });
  }
  /** Takes a cancel waiting in `rows` (the protocol decides): aborts the turn's work and returns the reason (else null). */
  takeCancel(rows) {
    const taken = this.fence.decide({ type: "inbox_read", rows: rows.map(inboxRow), parked: false });
    const cancel = taken.find((e) => e.type === "take_cancel");
    return cancel === void 0 ? null : this.cancel(rows, cancel.row);
  }
  cancel(rows, id) {
    const reason = rows.find((r) => r.inboxId === id)?.reason ?? "cancelled by the caller";
    this.fence.cancellation.abort(reason);
    return reason;
  }
  /** The event for a parked turn: the decisions waiting in the inbox (null: none, or a cancel). */
  async takeDecisions(current) {
    const { store, lease } = this.fence;
    let inbox;
    try {
      inbox = await this.fence.write(() => store.pendingInbox(lease));
    } catch {
      return null;
    }
    const taken = this.fence.decide({ type: "inbox_read", rows: inbox.map(inboxRow), parked: true });
    const cancel = taken.find((e) => e.type === "take_cancel");
    if (cancel !== void 0) {
      this.cancel(inbox, cancel.row);
      return null;
    }
    const apply = taken.find((e) => e.type === "apply_decisions");
    if (apply === void 0) {
      const deadline = approvalDeadline(current);
      const now = this.clock();
      return deadline !== null && deadline <= now ? { type: "approval_expired", now } : null;
    }
    const decisions = {};
    for (const id of apply.rows) {
      const row = inbox.find((r) => r.inboxId === id);
      if (row?.callId == null) continue;
      Object.defineProperty(decisions, row.callId, { value: row.decision, enumerable: true, writable: true, configurable: true });
    }
    const event = { type: "approvals_decided", decisions };
    const decided = new Set(decisionsTaken(current, event).map((t) => t.call.id));
    for (const id of apply.rows) {
      const callId = inbox.find((r) => r.inboxId === id)?.callId;
      if (callId == null || !decided.has(callId)) this.ignoredRows.push(id);
    }
    return event;
  }
  handlers() {
    return {
      ...defaultHandlers,
      append: (effect, ctx) => {
        ctx.transcript.push(effect.message);
        this.unwritten.push({ message: effect.message });
      },
      emit: (effect) => {
        this.unwritten.push({ notice: effect.notice });
      },
      persist: async (effect, _ctx, current) => {
        await this.write(current, false, effect.checkpoint === "boundary");
        if (current.status === "dispatching") crashPoint("dispatching_persisted");
      },
      // A parked batch says when it parked, so core can give each parked call its deadline.
      dispatch_tools: async (effect, ctx) => {
        const event = await runJournaledBatch(effect.calls, false, ctx, this.fence, this.dispatcher, this.idempotent);
        return event.type === "tools_parked" ? { ...event, at: this.clock() } : event;
      },
      execute_approved: (effect, ctx) => runJournaledBatch(effect.calls, true, ctx, this.fence, this.dispatcher, this.idempotent),
      // The agent's compaction (core's contract, checked by the shared runCompaction); what it kept
      // is written with the next write, placed after the messages appended before it.
      compact: async (effect, ctx) => {
        if (this.agent.compact === void 0) return defaultHandlers.compact(effect, ctx);
        const before = ctx.transcript.slice();
        const event = await defaultHandlers.compact(effect, ctx);
        const after = ctx.transcript;
        if (after.length !== before.length || after.some((m, i) => m !== before[i]))
          this.unwritten.push({ compaction: this.withoutSystem(after) });
        return event;
      },
      parked: (current) => this.takeDecisions(current)
    };
  }
  /** A transcript without the agent's system prompt at its head (the prompt is code: it is not stored). */
  withoutSystem(transcript) {
    const first = transcript[0];
    const system = this.agent.system;
    return system !== void 0 && first?.role === "system" && first.content === system ? transcript.slice(1) : [...transcript];
  }
  /** The driver's context: the agent's model and options, the transcript so far (with the system prompt). */
  context(transcript) {
    const { agent, fence } = this;
    const cancellation = fence.cancellation;
    const hooks = this.observer?.hooks;
    return {
      turnId: fence.lease.id,
      model: agent.model,
      dispatcher: this.dispatcher,
      transcript: agent.system === void 0 ? [...transcript] : [{ role: "system", content: agent.system }, ...transcript],
      signal: cancellation.signal,
      onEffect: (effect) => {
        this.onEffect(effect);
        hooks?.onEffect?.(effect);
      },
      onStep: (record) => {
        this.latest = record.state;
        hooks?.onStep?.(record);
      },
      ...definedProps2({ output: agent.output }),
      ...definedProps2({ check: agent.check }),
      ...definedProps2({ compact: agent.compact }),
      // A thread is the session of its turns' grants (`remember`).
      ...definedProps2({ session: this.thread ?? void 0 })
    };
  }
  /** Keeps the lease while the turn runs and hears a cancel that arrives meanwhile; returns the stop. */
  keepLease(leaseMs) {
    const { store, lease, report } = this.fence;
    const renewal = setInterval(
      () => {
        store.renew(lease, leaseMs).then(() => store.pendingInbox(lease)).then((rows) => void this.takeCancel(rows)).catch((error) => {
          if (!this.fence.caught(error)) report(error, lease.id);
        });
      },
      Math.max(1, Math.floor(leaseMs / 3))
    );
    return () => clearInterval(renewal);
  }
};
function inboxRow(row) {
  return { id: row.inboxId, kind: row.kind, callId: row.callId };
}

// src/worker/activation.ts
var TurnFailure = class extends Error {
  constructor(error) {
    super(error.message);
    this.error = error;
  }
  error;
};
function findAgent(claim, agents) {
  if (Object.hasOwn(agents, claim.agent)) return agents[claim.agent];
  const known = Object.keys(agents).map((a) => `'${a}'`).join(", ") || "(none)";
  throw new TurnFailure({
    kind: "unknown_agent",
    message: `No agent '${claim.agent}' is registered with the worker that took this turn (it has ${known}). Register the agent with createWorker({ agents }) and submit the turn again.`
  });
}
function makeDispatcher(claim, agent, fence, observer) {
  try {
    return createDispatcher({
      tools: journalingTools(agent.tools ?? [], fence),
      ...definedProps3({ wrapExecution: observer?.hooks?.wrapExecution }),
      ...definedProps3({ policy: agent.policy }),
      ...definedProps3({ permissions: agent.permissions }),
      ...definedProps3({ hooks: agent.hooks }),
      ...definedProps3({ budget: agent.budget }),
      ...definedProps3({ approvalTimeoutMs: agent.approvalTimeoutMs }),
      grants: claim.grants,
      ...claim.budgetUsage === null ? {} : { budgetUsage: claim.budgetUsage }
    });
  } catch (error) {
    throw new TurnFailure({ kind: "invalid_agent", message: `Agent '${claim.agent}' cannot run this turn: ${messageOf(error)}` });
  }
}
function initialState(claim, agent, dispatcher) {
  const id = claim.lease.id;
  if (claim.state !== null) {
    try {
      return parseTurnState3(claim.state);
    } catch (error) {
      throw new TurnFailure({
        kind: "corrupt_state",
        message: `The stored state of turn '${id}' cannot be read (${messageOf(error)}); it is kept as it was for inspection.`
      });
    }
  }
  const limits = layerLimits([agent.limits, claim.limits], dispatcher.loopExemptTools());
  try {
    return createTurn2(limits === void 0 ? { id } : { id, limits });
  } catch (error) {
    throw new TurnFailure({
      kind: "invalid_limits",
      message: `The limits of agent '${claim.agent}' and this turn do not combine: ${messageOf(error)}`
    });
  }
}
function observe(claim, agent, report) {
  if (agent.observe === void 0) return null;
  try {
    const observer = agent.observe({
      turnId: claim.lease.id,
      agent: claim.agent,
      traceContext: claim.traceContext,
      transcript: claim.transcript
    });
    return observer !== null && typeof observer === "object" ? observer : null;
  } catch (error) {
    report(
      new Error(`Agent '${claim.agent}': observe threw (${messageOf(error)}); the turn runs without its observer.`),
      claim.lease.id
    );
    return null;
  }
}
function prepare(claim, agents, fence) {
  try {
    const agent = findAgent(claim, agents);
    const observer = observe(claim, agent, fence.report);
    const dispatcher = makeDispatcher(claim, agent, fence, observer);
    const state = initialState(claim, agent, dispatcher);
    return { run: new HeldTurn(fence, agent, dispatcher, observer, claim.traceContext, claim.now, claim.thread ?? null), state };
  } catch (error) {
    if (error instanceof TurnFailure) return { error: error.error };
    throw error;
  }
}
async function journaled(run, state) {
  const calls = state.batch?.calls ?? [];
  if (calls.length === 0) return {};
  const { store, lease } = run.fence;
  const { results } = await run.fence.write(
    () => store.journal(
      lease,
      calls.map((c) => c.id)
    )
  );
  return { completed: results };
}
async function drive(run, claim, state) {
  const { store, lease } = run.fence;
  const cancelled = isTerminal3(state) ? null : run.takeCancel(await store.pendingInbox(lease));
  const [start, effects] = resume(state, {
    durable: true,
    retryWaited: true,
    ...definedProps3({ cancel: cancelled ?? void 0, input: claim.input ?? void 0 }),
    // A cancel closes the batch in flight: the results its journal holds are kept.
    ...cancelled === null ? {} : await journaled(run, state)
  });
  const { state: end, outcome } = await driveTurn(start, effects, run.context(claim.transcript), run.handlers());
  if (outcome === null && end.status !== "awaiting_approval") {
    const message = `The worker found nothing to do for a turn in status '${end.status}'.`;
    await store.commit(lease, { fail: { kind: "internal_error", message }, release: true });
    return;
  }
  await run.write(end, true);
}
async function runActivation(store, claim, agents, leaseMs, report, fence = new Fence(store, claim.lease, report)) {
  crashPoint("claimed");
  const prepared2 = prepare(claim, agents, fence);
  if ("error" in prepared2) {
    await store.commit(claim.lease, { fail: prepared2.error, release: true });
    return "finished";
  }
  const stopRenewal = prepared2.run.keepLease(leaseMs);
  let departure2 = "lost";
  try {
    try {
      await drive(prepared2.run, claim, prepared2.state);
    } catch (error) {
      if (fence.hold.lost === null && !isFencedOut(error)) throw error;
    } finally {
      stopRenewal();
      fence.cancellation.abort("the turn has left this worker");
    }
    departure2 = await depart(prepared2.run, fence);
    return departure2;
  } finally {
    prepared2.run.endActivation(activationStatus(departure2, fence.lease.status));
  }
}
function activationStatus(departure2, status) {
  if (departure2 === "retry") return "waiting_retry";
  if (departure2 === "handed_back" || departure2 === "lost") return departure2;
  if (departure2 === "parked") return "suspended";
  return status === "stopped" || status === "cancelled" ? status : "failed";
}
async function depart(run, fence) {
  const { store, lease, lost, report } = fence;
  let how = "lost";
  for (const effect of fence.decide({ type: "drive_ended", terminal: TERMINAL.has(lease.status) })) {
    if (effect.type === "park_retry") await run.parkRetry(effect);
    else if (effect.type === "release") await store.release(fence.fencedLease(effect.token)).catch(() => void 0);
    else if (effect.type === "depart") how = effect.how;
  }
  if (how === "lost" && lost !== null) report(lost, lease.id);
  return how;
}

// src/worker/loop.ts
var MAX_BACKOFF_MS = 5e3;
var MIN_SLEEP_MS = 5;
var COUNTER = {
  finished: "finished",
  parked: "parked",
  retry: "retrying",
  lost: "lost",
  handed_back: "handedBack"
};
var WorkerLoop = class {
  constructor(o) {
    this.o = o;
  }
  o;
  held = /* @__PURE__ */ new Map();
  counts = {
    claimed: 0,
    finished: 0,
    parked: 0,
    retrying: 0,
    lost: 0,
    handedBack: 0,
    claims: 0
  };
  loop = null;
  stopping = false;
  kicked = false;
  wakeSleep = null;
  unlisten = null;
  failures = 0;
  stats() {
    return { held: this.held.size, ...this.counts };
  }
  /** Something may be runnable: claim again now (or right after the claim in flight). */
  kick = () => {
    this.kicked = true;
    this.wakeSleep?.();
  };
  observe(event) {
    try {
      this.o.observer?.(event, this.stats());
    } catch {
    }
  }
  /** Claims up to the free capacity in one statement; `full` when every free slot was filled. */
  async fill() {
    const free = claimLimit({ held: this.held.size, concurrency: this.o.concurrency, stopping: this.stopping });
    if (free === 0) return { claimed: 0, full: true };
    const { store, id, leaseMs, caps, turnIds } = this.o;
    const claims = await store.claimMany({ owner: id, leaseMs, limit: free, caps, ...definedProps4({ turnIds }) });
    this.counts.claims += 1;
    for (const claim of claims) this.run(claim);
    return { claimed: claims.length, full: claims.length === free };
  }
  run(claim) {
    const { store, agents, leaseMs, report } = this.o;
    const turnId2 = claim.lease.id;
    const fence = new Fence(store, claim.lease, report);
    this.counts.claimed += 1;
    const done = runActivation(store, claim, agents, leaseMs, report, fence).catch((error) => {
      report(error, turnId2);
      return "lost";
    }).then((how) => {
      this.held.delete(turnId2);
      this.counts[COUNTER[how]] += 1;
      this.observe({ type: "left", turnId: turnId2, how });
      this.kick();
    });
    this.held.set(turnId2, { fence, done });
    this.observe({ type: "claimed", turnId: turnId2, agent: claim.agent, token: claim.lease.token });
  }
  /** Turns running now, to wait for. */
  running() {
    return [...this.held.values()].map((h) => h.done);
  }
  start() {
    if (this.loop !== null) return;
    this.stopping = false;
    this.observe({ type: "started", worker: this.o.id });
    this.loop = (async () => {
      try {
        this.unlisten = await this.o.store.listen({
          onNotify: this.kick,
          onConnection: (state, error) => this.database(state, error)
        });
      } catch (error) {
        this.o.report(error, null);
      }
      await this.main();
    })();
  }
  database(state, error) {
    this.observe(state === "lost" ? { type: "database", state, error: messageOf(error) } : { type: "database", state });
  }
  async main() {
    while (!this.stopping) {
      this.kicked = false;
      const wait = await this.round();
      if (this.kicked || this.stopping) continue;
      await this.sleep(wait);
    }
  }
  /** One claim; returns how long to sleep unless woken (the next due turn, the poll, or a backoff). */
  async round() {
    const { store, pollMs, report } = this.o;
    try {
      const { full } = await this.fill();
      const due = full ? null : await store.nextDue();
      if (this.failures > 0) {
        this.failures = 0;
        this.database("restored");
      }
      return Math.max(MIN_SLEEP_MS, Math.min(pollMs, due ?? pollMs));
    } catch (error) {
      this.failures += 1;
      if (this.failures === 1) this.database("lost", error);
      report(error, null);
      return Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(this.failures, 10));
    }
  }
  sleep(ms) {
    return new Promise((resolve3) => {
      const timer = setTimeout(done, ms);
      const wakeSleep = () => done();
      function done() {
        clearTimeout(timer);
        resolve3();
      }
      this.wakeSleep = wakeSleep;
    }).finally(() => {
      this.wakeSleep = null;
    });
  }
  /**
   * Stops claiming and waits for the turns held to finish or park. With a deadline, what is still
   * running when it passes is handed back: its work stops, nothing more is written by it, and its
   * lease ends so another worker takes it at once.
   */
  async stop(deadlineMs) {
    this.stopping = true;
    this.kick();
    await this.loop;
    this.loop = null;
    this.observe({ type: "draining", held: this.held.size, deadlineMs });
    const timer = deadlineMs === null ? null : setTimeout(() => {
      for (const { fence } of this.held.values()) fence.lose(new HandedBack(fence.lease.id));
    }, deadlineMs);
    await Promise.all(this.running());
    if (timer !== null) clearTimeout(timer);
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => void 0);
    this.observe({ type: "stopped" });
  }
};

// src/worker/worker.ts
function createWorker(options) {
  if (options === null || typeof options !== "object") throw new TypeError("createWorker needs { store, agents }.");
  const { store, agents } = options;
  if (store === null || typeof store !== "object" || typeof store.claim !== "function")
    throw new TypeError("createWorker option `store` must be a store from openStore().");
  if (agents === null || typeof agents !== "object")
    throw new TypeError("createWorker option `agents` must be an object { [name]: { model, tools, \u2026 } }.");
  for (const [name, agent] of Object.entries(agents)) checkAgent(name, agent);
  armedCrash();
  const concurrency = count(options.concurrency, 4, "concurrency", 1);
  const leaseMs = count(options.leaseMs, 3e4, "leaseMs", 3);
  const pollMs = count(options.pollMs, 2e3, "pollMs", 1);
  const id = options.id ?? `worker_${randomUUID3()}`;
  const turnIds = options.turnIds;
  if (turnIds !== void 0 && (!Array.isArray(turnIds) || !turnIds.every((t) => typeof t === "string")))
    throw new TypeError("createWorker option `turnIds` must be an array of turn ids.");
  const report = (error, turnId2) => {
    try {
      options.onError?.(error, turnId2);
    } catch {
    }
  };
  const caps = Object.fromEntries(
    Object.entries(agents).flatMap(([name, agent]) => agent.maxRunning === void 0 ? [] : [[name, agent.maxRunning]])
  );
  const loop = new WorkerLoop({
    store,
    agents,
    id,
    concurrency,
    leaseMs,
    pollMs,
    caps,
    report,
    observer: options.observer,
    turnIds
  });
  return {
    id,
    start: () => loop.start(),
    stats: () => loop.stats(),
    async stop(stopOptions = {}) {
      const deadlineMs = stopOptions.deadlineMs ?? null;
      if (deadlineMs !== null) count(deadlineMs, 0, "deadlineMs", 0, "worker.stop option");
      await loop.stop(deadlineMs);
    },
    async runUntilIdle() {
      for (; ; ) {
        const { claimed } = await loop.fill();
        const running = loop.running();
        if (running.length > 0) await Promise.race(running);
        else if (claimed === 0) {
          const due = await store.nextDue("retries");
          if (due === null) return;
          await new Promise((resolve3) => setTimeout(resolve3, Math.max(1, due)));
        }
      }
    }
  };
}
function checkAgent(name, agent) {
  if (agent === null || typeof agent !== "object")
    throw new TypeError(`createWorker: agent '${name}' must be an object { model, tools?, system?, \u2026 }.`);
  if (agent.model === null || typeof agent.model !== "object" || typeof agent.model.generate !== "function") {
    throw new TypeError(`createWorker: agent '${name}' needs a \`model\` with a generate(request, { signal }) method.`);
  }
  if (agent.tools !== void 0 && !Array.isArray(agent.tools))
    throw new TypeError(`createWorker: agent '${name}' option \`tools\` must be an array of tools made with defineTool.`);
  if (agent.system !== void 0 && typeof agent.system !== "string")
    throw new TypeError(`createWorker: agent '${name}' option \`system\` must be a string.`);
  if (agent.maxRunning !== void 0) count(agent.maxRunning, 1, "maxRunning", 1, `createWorker: agent '${name}' option`);
  if (agent.limits !== void 0) {
    try {
      createTurn3({ id: "check", limits: agent.limits });
    } catch (error) {
      throw new TypeError(
        `createWorker: agent '${name}' has bad limits: ${error instanceof Error ? error.message : String(error)}`
      );
    }
  }
}
function count(value, fallback, what, min, where = "createWorker option") {
  if (value === void 0) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new RangeError(`${where} \`${what}\` must be a whole number >= ${min}, got ${String(value)}.`);
  return value;
}

// test/fixtures/crash-drive.ts
var [url, schemaArg, turnId] = process.argv.slice(2);
var schema = schemaArg === "-" ? void 0 : schemaArg;
var AGENT = "crash";
var LEASE_MS = 1200;
var model = {
  async generate(request) {
    if (request.messages[request.messages.length - 1]?.role === "tool") return { text: "done", toolCalls: [] };
    return {
      text: "",
      toolCalls: [
        { id: "c1", name: "add", input: { a: 1, b: 2 } },
        { id: "c2", name: "pay", input: { amount: 3 } }
      ]
    };
  }
};
var pause = (ms) => new Promise((resolve3) => setTimeout(resolve3, ms));
function tools(sql) {
  const sideEffect = async (ctx) => {
    await sql.query("INSERT INTO crash_side_effects (turn_id, call_id, pid) VALUES ($1, $2, $3)", [
      ctx.turnId,
      ctx.callId,
      process.pid
    ]);
    await pause(150);
  };
  const add = defineTool({
    name: "add",
    description: "Adds two numbers.",
    input: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }, ctx) => (await sideEffect(ctx), a + b)
  });
  const pay = defineTool({
    name: "pay",
    description: "Pays an amount.",
    input: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }, ctx) => (await sideEffect(ctx), `paid ${amount}`)
  });
  return [add, pay];
}
async function main() {
  const sql = await openSql(url, schema === void 0 ? {} : { schema });
  await sql.query(
    "CREATE TABLE IF NOT EXISTS crash_side_effects (id serial PRIMARY KEY, turn_id text NOT NULL, call_id text NOT NULL, pid integer NOT NULL)"
  );
  const store = createStore(sql);
  const worker = createWorker({ store, agents: { [AGENT]: { model, tools: tools(sql) } }, leaseMs: LEASE_MS });
  for (; ; ) {
    const turn = await store.get(turnId);
    if (turn === null) throw new Error(`no turn '${turnId}'`);
    if (["stopped", "failed", "cancelled"].includes(turn.status)) break;
    if (turn.parked.length > 0) {
      const ids = turn.parked.map((p) => p.call.id);
      const { accepted } = await store.decide(turnId, Object.fromEntries(ids.map((id) => [id, { type: "approve" }])));
      for (const id of accepted) process.stdout.write(`acknowledged ${id}
`);
      continue;
    }
    await worker.runUntilIdle();
    await pause(100);
  }
  await store.close();
}
await main();

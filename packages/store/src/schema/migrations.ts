// The schema, as numbered migrations (migrate.ts applies them on open).

/** The migrations, in order; the schema version is the number of migrations applied. */
export const MIGRATIONS: readonly string[] = [
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
  `,
  // Fewer bytes per entry. A checkpoint keeps a notice { name, data } as ["n", name, data], the turn's
  // `turn_started` notice (whose data is the turn's id) as ["t"], and a status change as ["s",
  // status] or ["s", status, outcome]; turnkit_log_entries reads them back as before, and reads the
  // entries written earlier as they are. turnkit_turns_live goes: no statement read it (a cap's
  // count of held turns reads the runnable ones: a held turn is runnable), and its entry cost every
  // submit a write.
  `
  DROP INDEX turnkit_turns_live;
  DROP VIEW turnkit_log_entries;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 IN ('m', 'r', 'u') THEN 'message' WHEN e.value ->> 0 IN ('n', 't') THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value -> 'data'
           WHEN e.value ->> 0 = 'r' THEN (SELECT json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))
             FROM turnkit_tool_results j WHERE j.turn_seq = l.turn_seq AND j.call_id = e.value ->> 1)
           WHEN e.value ->> 0 = 'u' THEN json_build_object('role', 'user', 'content', t.input)
           WHEN e.value ->> 0 = 't' THEN json_build_object('name', 'turn_started', 'data', json_build_object('id', t.id))
           WHEN e.value ->> 0 = 'n' AND json_array_length(e.value) = 3 THEN json_build_object('name', e.value -> 1, 'data', e.value -> 2)
           WHEN e.value ->> 0 = 's' AND json_typeof(e.value -> 1) = 'string' THEN json_build_object('status', e.value -> 1, 'outcome', e.value -> 2)
           ELSE e.value -> 1 END,
      l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n)
    WHERE l.kind = 'entries';
  `,
  // Fewer bytes per round. A checkpoint keeps a model's reply { role: 'assistant', content(,
  // toolCalls) } as ["a", content(, toolCalls)], and the two notices of every round, iteration
  // { iteration } and steering { round }, as ["i", iteration] and ["g", round];
  // turnkit_log_entries reads them back whole, and reads the entries written earlier as they are.
  `
  DROP VIEW turnkit_log_entries;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 IN ('m', 'r', 'u', 'a') THEN 'message' WHEN e.value ->> 0 IN ('n', 't', 'i', 'g') THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value -> 'data'
           WHEN e.value ->> 0 = 'r' THEN (SELECT json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))
             FROM turnkit_tool_results j WHERE j.turn_seq = l.turn_seq AND j.call_id = e.value ->> 1)
           WHEN e.value ->> 0 = 'u' THEN json_build_object('role', 'user', 'content', t.input)
           WHEN e.value ->> 0 = 't' THEN json_build_object('name', 'turn_started', 'data', json_build_object('id', t.id))
           WHEN e.value ->> 0 = 'a' AND json_array_length(e.value) = 3
             THEN json_build_object('role', 'assistant', 'content', e.value -> 1, 'toolCalls', e.value -> 2)
           WHEN e.value ->> 0 = 'a' THEN json_build_object('role', 'assistant', 'content', e.value -> 1)
           WHEN e.value ->> 0 = 'i' THEN json_build_object('name', 'iteration', 'data', json_build_object('iteration', e.value -> 1))
           WHEN e.value ->> 0 = 'g' THEN json_build_object('name', 'steering', 'data', json_build_object('round', e.value -> 1))
           WHEN e.value ->> 0 = 'n' AND json_array_length(e.value) = 3 THEN json_build_object('name', e.value -> 1, 'data', e.value -> 2)
           WHEN e.value ->> 0 = 's' AND json_typeof(e.value -> 1) = 'string' THEN json_build_object('status', e.value -> 1, 'outcome', e.value -> 2)
           ELSE e.value -> 1 END,
      l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n)
    WHERE l.kind = 'entries';
  `,
  // Fewer bytes per round, again. A checkpoint written with its batch's first call's start (the
  // worker's protocol: the state before a batch rides on that start) keeps its log entries in the
  // call's new journal row (`log`, from seq `log_seq`; their time and token are the row's
  // `started_at` and `started_token`) instead of a log row of their own: one row and one index
  // entry a round, not two each. turnkit_log_entries reads the entries of both, as before. A
  // journal row keeps a plain text output that is not an error ({ output: string, isError: false })
  // as that text alone, a JSON string; turnkit_journal_result reads it back whole. A model's reply
  // with tool calls and no text is kept as ["a", toolCalls].
  `
  CREATE OR REPLACE FUNCTION turnkit_journal_result(call_id text, name text, result json) RETURNS json LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN json_typeof(result) = 'string' THEN json_build_object('callId', call_id, 'name', name, 'output', result, 'isError', false)
      WHEN json_typeof(result) <> 'object' OR result -> 'callId' IS NOT NULL THEN result
      WHEN NOT EXISTS (SELECT 1 FROM json_object_keys(result)) THEN json_build_object('callId', call_id, 'name', name)
      ELSE concat('{"callId":', to_json(call_id)::text, ',"name":', to_json(name)::text, ',', substr(ltrim(result::text), 2))::json END
  $$;
  ALTER TABLE turnkit_tool_results ADD COLUMN log_seq integer;
  ALTER TABLE turnkit_tool_results ADD COLUMN log json;
  ALTER TABLE turnkit_tool_results ALTER COLUMN log SET STORAGE MAIN;
  DROP VIEW turnkit_log_entries;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 IN ('m', 'r', 'u', 'a') THEN 'message' WHEN e.value ->> 0 IN ('n', 't', 'i', 'g') THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value -> 'data'
           WHEN e.value ->> 0 = 'r' THEN (SELECT json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))
             FROM turnkit_tool_results j WHERE j.turn_seq = l.turn_seq AND j.call_id = e.value ->> 1)
           WHEN e.value ->> 0 = 'u' THEN json_build_object('role', 'user', 'content', t.input)
           WHEN e.value ->> 0 = 't' THEN json_build_object('name', 'turn_started', 'data', json_build_object('id', t.id))
           WHEN e.value ->> 0 = 'a' AND json_array_length(e.value) = 3
             THEN json_build_object('role', 'assistant', 'content', e.value -> 1, 'toolCalls', e.value -> 2)
           WHEN e.value ->> 0 = 'a' AND json_typeof(e.value -> 1) = 'array'
             THEN json_build_object('role', 'assistant', 'content', '', 'toolCalls', e.value -> 1)
           WHEN e.value ->> 0 = 'a' THEN json_build_object('role', 'assistant', 'content', e.value -> 1)
           WHEN e.value ->> 0 = 'i' THEN json_build_object('name', 'iteration', 'data', json_build_object('iteration', e.value -> 1))
           WHEN e.value ->> 0 = 'g' THEN json_build_object('name', 'steering', 'data', json_build_object('round', e.value -> 1))
           WHEN e.value ->> 0 = 'n' AND json_array_length(e.value) = 3 THEN json_build_object('name', e.value -> 1, 'data', e.value -> 2)
           WHEN e.value ->> 0 = 's' AND json_typeof(e.value -> 1) = 'string' THEN json_build_object('status', e.value -> 1, 'outcome', e.value -> 2)
           ELSE e.value -> 1 END,
      l.lease_token, l.at, l.turn_seq
    FROM (SELECT turn_seq, seq, lease_token, at, data FROM turnkit_log WHERE kind = 'entries'
          UNION ALL
          SELECT turn_seq, log_seq, started_token, started_at, log FROM turnkit_tool_results WHERE log IS NOT NULL) l
    JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n);
  `,
  // Fewer bytes per round, once more. A journal row that carries its checkpoint's entries keeps the
  // model's reply that made its call, when that reply is the one call (the row's own id and name)
  // with no other key, as ["b", input] or ["b", input, content] (content '' left out):
  // turnkit_log_entries reads it back whole, the call's id and name from the row. Entries written
  // earlier read as they are.
  `
  DROP VIEW turnkit_log_entries;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 IN ('m', 'r', 'u', 'a', 'b') THEN 'message' WHEN e.value ->> 0 IN ('n', 't', 'i', 'g') THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value -> 'data'
           WHEN e.value ->> 0 = 'r' THEN (SELECT json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))
             FROM turnkit_tool_results j WHERE j.turn_seq = l.turn_seq AND j.call_id = e.value ->> 1)
           WHEN e.value ->> 0 = 'u' THEN json_build_object('role', 'user', 'content', t.input)
           WHEN e.value ->> 0 = 't' THEN json_build_object('name', 'turn_started', 'data', json_build_object('id', t.id))
           WHEN e.value ->> 0 = 'a' AND json_array_length(e.value) = 3
             THEN json_build_object('role', 'assistant', 'content', e.value -> 1, 'toolCalls', e.value -> 2)
           WHEN e.value ->> 0 = 'a' AND json_typeof(e.value -> 1) = 'array'
             THEN json_build_object('role', 'assistant', 'content', '', 'toolCalls', e.value -> 1)
           WHEN e.value ->> 0 = 'a' THEN json_build_object('role', 'assistant', 'content', e.value -> 1)
           WHEN e.value ->> 0 = 'b' THEN json_build_object('role', 'assistant', 'content', coalesce(e.value -> 2, to_json(''::text)),
             'toolCalls', json_build_array(json_build_object('id', l.call_id, 'name', l.name, 'input', e.value -> 1)))
           WHEN e.value ->> 0 = 'i' THEN json_build_object('name', 'iteration', 'data', json_build_object('iteration', e.value -> 1))
           WHEN e.value ->> 0 = 'g' THEN json_build_object('name', 'steering', 'data', json_build_object('round', e.value -> 1))
           WHEN e.value ->> 0 = 'n' AND json_array_length(e.value) = 3 THEN json_build_object('name', e.value -> 1, 'data', e.value -> 2)
           WHEN e.value ->> 0 = 's' AND json_typeof(e.value -> 1) = 'string' THEN json_build_object('status', e.value -> 1, 'outcome', e.value -> 2)
           ELSE e.value -> 1 END,
      l.lease_token, l.at, l.turn_seq
    FROM (SELECT turn_seq, seq, lease_token, at, data, NULL::text AS call_id, NULL::text AS name FROM turnkit_log WHERE kind = 'entries'
          UNION ALL
          SELECT turn_seq, log_seq, started_token, started_at, log, call_id, name FROM turnkit_tool_results WHERE log IS NOT NULL) l
    JOIN turnkit_turns t ON t.seq = l.turn_seq
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n);
  `,
  // The same view, read by index: the rows that carry entries are looked up per turn (each branch
  // filtered by the turn's seq, so by its primary key) instead of joined to the turns by a hash of
  // every entries row of the log and the journal. A claim and a watch read one turn's entries, so
  // their cost no longer grows with the number of turns the store has ever run.
  `
  DROP VIEW turnkit_log_entries;
  CREATE VIEW turnkit_log_entries AS
    SELECT t.id AS turn_id, l.seq, l.kind, l.data, l.lease_token, l.at, l.turn_seq
    FROM turnkit_log l JOIN turnkit_turns t ON t.seq = l.turn_seq WHERE l.kind <> 'entries'
    UNION ALL
    SELECT t.id, l.seq + (e.n - 1)::int,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value ->> 'kind'
           WHEN e.value ->> 0 IN ('m', 'r', 'u', 'a', 'b') THEN 'message' WHEN e.value ->> 0 IN ('n', 't', 'i', 'g') THEN 'notice'
           WHEN e.value ->> 0 = 'c' THEN 'compaction' ELSE 'status' END,
      CASE WHEN json_typeof(e.value) <> 'array' THEN e.value -> 'data'
           WHEN e.value ->> 0 = 'r' THEN (SELECT json_build_object('role', 'tool', 'result', turnkit_journal_result(j.call_id, j.name, j.result))
             FROM turnkit_tool_results j WHERE j.turn_seq = l.turn_seq AND j.call_id = e.value ->> 1)
           WHEN e.value ->> 0 = 'u' THEN json_build_object('role', 'user', 'content', t.input)
           WHEN e.value ->> 0 = 't' THEN json_build_object('name', 'turn_started', 'data', json_build_object('id', t.id))
           WHEN e.value ->> 0 = 'a' AND json_array_length(e.value) = 3
             THEN json_build_object('role', 'assistant', 'content', e.value -> 1, 'toolCalls', e.value -> 2)
           WHEN e.value ->> 0 = 'a' AND json_typeof(e.value -> 1) = 'array'
             THEN json_build_object('role', 'assistant', 'content', '', 'toolCalls', e.value -> 1)
           WHEN e.value ->> 0 = 'a' THEN json_build_object('role', 'assistant', 'content', e.value -> 1)
           WHEN e.value ->> 0 = 'b' THEN json_build_object('role', 'assistant', 'content', coalesce(e.value -> 2, to_json(''::text)),
             'toolCalls', json_build_array(json_build_object('id', l.call_id, 'name', l.name, 'input', e.value -> 1)))
           WHEN e.value ->> 0 = 'i' THEN json_build_object('name', 'iteration', 'data', json_build_object('iteration', e.value -> 1))
           WHEN e.value ->> 0 = 'g' THEN json_build_object('name', 'steering', 'data', json_build_object('round', e.value -> 1))
           WHEN e.value ->> 0 = 'n' AND json_array_length(e.value) = 3 THEN json_build_object('name', e.value -> 1, 'data', e.value -> 2)
           WHEN e.value ->> 0 = 's' AND json_typeof(e.value -> 1) = 'string' THEN json_build_object('status', e.value -> 1, 'outcome', e.value -> 2)
           ELSE e.value -> 1 END,
      l.lease_token, l.at, l.turn_seq
    FROM turnkit_turns t
    CROSS JOIN LATERAL (
      SELECT turn_seq, seq, lease_token, at, data, NULL::text AS call_id, NULL::text AS name FROM turnkit_log
      WHERE turn_seq = t.seq AND kind = 'entries'
      UNION ALL
      SELECT turn_seq, log_seq, started_token, started_at, log, call_id, name FROM turnkit_tool_results
      WHERE turn_seq = t.seq AND log IS NOT NULL) l
    CROSS JOIN LATERAL json_array_elements(l.data) WITH ORDINALITY AS e(value, n);
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

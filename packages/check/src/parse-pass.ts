// Invariant 3's parse check (parseTurnState gives a state's JSON back unchanged) as a second pass
// on the other core: the explorer hands over the JSON text of each new distinct state and goes on;
// a worker thread parses them while it explores, and at the end of each depth level the explorer
// waits for what is left and takes the problems, in the order the states were met. The check
// depends on the text alone (core's parseTurnState, no user code), so it can run on another thread;
// the explorer's results are the same as with the check inline.
//
// Measured by the profile (`node --cpu-prof`, maxIterations 2, purity re-runs on 1 edge in 16): the
// parse check inline was a third of the exploration (core's parseTurnState copies and validates the
// whole state); handing the texts over costs the explorer about a tenth, waiting at the ends of the
// levels a twenty-fifth (load average above 15, where the worker got little of a core).
// Below `WORKER_AFTER` states it runs inline (starting a worker costs more than it saves), and
// inline too where the worker's module is not built (the package's TypeScript sources run by a
// test runner that a worker thread does not go through).

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { receiveMessageOnPort, MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { parseProblemOfText } from './invariants.js';

/** New distinct states checked inline before a worker is started (the default of `ParsePass`). */
const WORKER_AFTER = 2_000;
/** Texts sent to the worker in one message. */
const BATCH = 256;
/** A worker that answers no batch for this long is taken for broken: what it has not answered is checked inline. */
const STALL_MS = 10_000;

/** What the explorer sends the worker: texts and the index each problem comes back with. */
export interface ParseBatch {
  readonly seq: number;
  readonly indexes: readonly number[];
  /** The texts one a line (a JSON text has no line break): one string copies across faster than many. */
  readonly texts: string;
}

/** Problems found, by the index the explorer gave. */
export type ParseAnswer = Array<[index: number, problem: string]>;

/** The worker's module: built next to this one (dist), or absent when this file runs from its sources. */
const workerUrl = new URL('../dist/parse-worker.js', import.meta.url);

/** Runs the parse check of the states an explorer hands over, inline or on a worker thread. */
export class ParsePass {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private done: Int32Array | null = null;
  private texts: string[] = [];
  private indexes: number[] = [];
  private sent = 0;
  /** Batches sent and not answered yet, by sequence number. */
  private readonly unanswered = new Map<number, ParseBatch>();
  private seen = 0;
  private found: ParseAnswer = [];

  /** True once a worker took a batch (it may have been stopped since). */
  usedWorker = false;

  /**
   * `name` is how a problem names the state ("state", "state after"); `workerAfter` is how many
   * texts are checked inline before a worker starts (`Infinity`: never).
   */
  constructor(
    private readonly name: string,
    private readonly workerAfter = WORKER_AFTER,
  ) {}

  /** Checks `text` now or later; its problem, if any, comes back from `settle` with `index`. */
  check(text: string, index: number): void {
    this.seen += 1;
    if (this.worker === null && this.seen === this.workerAfter) this.start();
    if (this.worker === null) {
      const problem = parseProblemOfText(text, this.name);
      if (problem !== undefined) this.found.push([index, problem]);
      return;
    }
    this.texts.push(text);
    this.indexes.push(index);
    if (this.texts.length >= BATCH) this.flush();
  }

  /** Waits for every text handed over so far; returns their problems by index, smallest first. */
  settle(): ParseAnswer {
    const answer = this.found;
    this.found = [];
    if (this.worker !== null && this.port !== null && this.done !== null) {
      this.flush();
      let answered = Atomics.load(this.done, 0);
      let waited = 0;
      while (answered < this.sent && waited < STALL_MS) {
        const result = Atomics.wait(this.done, 0, answered, 1_000);
        const now = Atomics.load(this.done, 0);
        waited = now === answered && result === 'timed-out' ? waited + 1_000 : 0;
        answered = now;
      }
      this.drain(answer);
      if (this.unanswered.size > 0) {
        // The worker stopped answering (it could not start, or died): check the rest here.
        this.close();
        for (const batch of this.unanswered.values())
          batch.texts.split('\n').forEach((text, i) => {
            const problem = parseProblemOfText(text, this.name);
            if (problem !== undefined) answer.push([batch.indexes[i] as number, problem]);
          });
        this.unanswered.clear();
      }
    }
    return answer.sort((a, b) => a[0] - b[0]);
  }

  /** Stops the worker (the explorer calls it however the exploration ends). */
  close(): void {
    void this.worker?.terminate();
    this.port?.close();
    this.worker = null;
    this.port = null;
    this.done = null;
  }

  private start(): void {
    if (!workerUrl.protocol.startsWith('file') || !existsSync(fileURLToPath(workerUrl))) return;
    const done = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    // No exec arguments: a test runner's `--conditions @turnkit/source` would point the worker's
    // imports at TypeScript sources it cannot load.
    this.worker = new Worker(workerUrl, {
      workerData: { port: port2, done, name: this.name },
      transferList: [port2],
      execArgv: [],
    });
    this.worker.unref();
    // A worker that fails is noticed by `settle` (no answer); the event must not crash the process.
    this.worker.on('error', () => {});
    this.port = port1;
    this.done = done;
  }

  /** Takes the answers that have come (the texts they answer are dropped). */
  private drain(into: ParseAnswer): void {
    if (this.port === null) return;
    for (let message = receiveMessageOnPort(this.port); message !== undefined; message = receiveMessageOnPort(this.port)) {
      const { seq, problems } = message.message as { seq: number; problems: ParseAnswer };
      this.unanswered.delete(seq);
      into.push(...problems);
    }
  }

  private flush(): void {
    if (this.texts.length === 0 || this.port === null) return;
    const batch: ParseBatch = { seq: this.sent, indexes: this.indexes, texts: this.texts.join('\n') };
    this.port.postMessage(batch);
    this.unanswered.set(batch.seq, batch);
    this.usedWorker = true;
    this.sent += 1;
    this.drain(this.found);
    this.texts = [];
    this.indexes = [];
  }
}

// The deadlines of running tool calls, watched by one timer for the whole process instead of a
// timer per call: a call adds its deadline when its tool's promise is still pending and removes
// it when the promise settles, which costs a set insertion and deletion, not a timer to make and
// cancel. The timer is due at the earliest deadline; when it fires it expires every call whose
// deadline has passed and is set again for the next one. While no call is watched, the timer no
// longer keeps the process alive (a pending call does, as its own timer would).

/** A call's deadline (a `performance.now()` time) and what to do when it passes. */
export interface Deadline {
  readonly at: number;
  expire(): void;
}

const watched = new Set<Deadline>();
let timer: ReturnType<typeof setTimeout> | undefined;
let due = Number.POSITIVE_INFINITY;
// The setTimeout the timer was made with: test code may swap in fake timers between two calls.
let armedWith: typeof setTimeout | undefined;

/** A timer fires on the event loop's clock, which may run up to a millisecond behind `performance.now()`. */
const SLACK_MS = 1;

/** Watches `deadline` until `unwatch`: `expire()` runs once it has passed. */
export function watch(deadline: Deadline): void {
  watched.add(deadline);
  if (timer === undefined || armedWith !== globalThis.setTimeout || deadline.at < due) arm(deadline.at);
  else if (watched.size === 1) timer.ref?.();
}

/** Stops watching `deadline` (its call settled); nothing happens if it already expired. */
export function unwatch(deadline: Deadline): void {
  watched.delete(deadline);
  if (watched.size === 0) timer?.unref?.();
}

function arm(at: number): void {
  if (timer !== undefined && armedWith === globalThis.setTimeout) clearTimeout(timer);
  armedWith = globalThis.setTimeout;
  due = at;
  timer = setTimeout(fire, Math.max(0, at - performance.now()));
}

function fire(): void {
  timer = undefined;
  due = Number.POSITIVE_INFINITY;
  const now = performance.now() + SLACK_MS;
  let next = Number.POSITIVE_INFINITY;
  for (const deadline of [...watched]) {
    if (deadline.at <= now) {
      watched.delete(deadline);
      deadline.expire();
    } else if (deadline.at < next) next = deadline.at;
  }
  if (next !== Number.POSITIVE_INFINITY && timer === undefined) arm(next);
}

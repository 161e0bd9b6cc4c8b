// "What bounds it" on docs/benchmarks.md: the run's own figures set beside what profiling this
// harness showed (the profile of the same run is printed under "Profile"). Keep it true when the
// code changes.
import type { BenchReport, TurnReport } from './report-types.js';
import { fastestPeer, fixed, floorOf, heavyPeers, int, longTurnGrowth, TARGETS } from './targets.js';

/** The scenario's transitions: start, 3 replies, 2 batches, 2 compactions, the accepted output. */
const STEPS_PER_TURN = 9;

/** Why the fastest-peer bar stays missed: what is left of a turn, and why each part stays. */
const MISSED_PEER =
  " What is left is what a turn is made of, not waste: the turn's signal is the documented contract of runTurn and agents (a cancel is at once, even for a model that ignores its signal, and the signal aborts when the turn ends); the async stages are one plain `async` function per stage, by the house's rule (no sync fast paths or hand-made waiters for less than 20% of a turn); each transition's copy of the event is core's one check of untrusted input (model output, tool results), and the chokepoint's zod parse, policy facts, shaped result and audit record are the tool-call rules the peers do not have. Closing the bar means cutting one of those.";

/** The share of the profile's listed entries whose place matches `test`, as text ('' when none is listed). */
function share(report: TurnReport, test: (where: string) => boolean): string {
  const entries = report.profile?.top.filter((e) => test(e.where)) ?? [];
  if (entries.length === 0) return '';
  return ` (${fixed(
    entries.reduce((sum, e) => sum + e.selfPercent, 0),
    1,
  )}% of the profile in the entries listed)`;
}

/** What a turn of the reference system pays, largest first, as profiling it showed (`node --cpu-prof` and V8's sampling heap profiler). */
function payments(report: TurnReport, stepUs: number): string {
  const gc = share(report, (where) => where === '(garbage collector)');
  const signal = share(report, (where) => where.includes('abort_controller') || where.includes('event_target'));
  return [
    `garbage collection of what it allocates${gc}, mostly the promises and frames of its async stages (one per blocking effect and per pipeline stage of each call), then the states, effects and records;`,
    `the turn's own AbortSignal${signal}, which runTurn and agents make per turn to follow the caller's signal and abort when the turn ends (docs/custom-interpreter.md): Node 20 makes an AbortSignal slowly, each of the 3 model calls is raced against it and each of the 2 tool calls waits under it (a listener added and removed each time), and the turn's end dispatches its abort event (a tool's own signal is made only when the tool reads it);`,
    `its ${STEPS_PER_TURN} \`step\` transitions (about ${fixed(stepUs, 1)} µs at the measured cost per transition: each a fresh state and a validated copy of the event, and for each reply with calls the call-id filter, read and written in its base64 text, two characters per new id);`,
    "the chokepoint per tool call (a plain copy of the model's input, the zod parse, the policy facts, the budget, the tool under its timer, the shaped result and its audit record with a JSON copy of the input, which core reads back as part of the event);",
    'and `scriptedModel`, which copies each request it records.',
  ].join(' ');
}

/** The "Time per turn" point of "What bounds it": one line. */
export function timeBound(report: TurnReport): string {
  const inline = report.turns[0];
  const floor = floorOf(report);
  const peer = fastestPeer(report);
  const heavy = heavyPeers(report).sort((a, b) => a.medianUs - b.medianUs)[0];
  if (inline === undefined) return '- **Time per turn.** No turnkit system ran.';
  const stepUs = (STEPS_PER_TURN * report.step.nsPerTransition) / 1000;
  const parts = [
    `- **Time per turn.** ${inline.name} takes ${fixed(inline.medianUs, 1)} µs (${fixed(inline.cpuUs, 1)} µs of CPU) and allocates ${fixed(inline.bytesPerTurn / 1024, 1)} KB a turn`,
    floor === undefined
      ? '.'
      : `; the floor takes ${fixed(floor.medianUs, 1)} µs and allocates ${fixed(floor.bytesPerTurn / 1024, 1)} KB, so turnkit is ${fixed(inline.medianUs / floor.medianUs, 1)}× the floor.`,
    ` A real turn's model calls take seconds, so nothing on this path is written to save microseconds: the bar is relative to the peers, at least ${TARGETS.fastestPeerRatio}× faster than the fastest and ${TARGETS.heavyPeerRatio}× faster than ${TARGETS.heavyPeers.join(', ')}.`,
    ` What a turn pays, by the profile below: ${payments(report, stepUs)}`,
    ' Peers that use AsyncLocalStorage switch on async hooks for the whole process, so once they are loaded every promise costs more for every system (the timed rounds run after; the profile below is taken before).',
  ];
  if (peer !== undefined)
    parts.push(
      ` The fastest peer, ${peer.name}, takes ${fixed(peer.medianUs, 1)} µs: ${fixed(peer.medianUs / inline.medianUs, 1)}× turnkit's time (bar ${TARGETS.fastestPeerRatio}×); its loop is thinner (a plain async loop, no validation of model output, no permission pipeline, no audit records).${peer.medianUs / inline.medianUs >= TARGETS.fastestPeerRatio ? '' : MISSED_PEER}`,
    );
  if (heavy !== undefined)
    parts.push(
      ` Of ${TARGETS.heavyPeers.join(', ')}, turnkit leads ${heavy.name} by the least: ${fixed(heavy.medianUs, 1)} µs, ${fixed(heavy.medianUs / inline.medianUs, 1)}× turnkit's time (bar ${TARGETS.heavyPeerRatio}×).`,
    );
  return parts.join('');
}

/** The bullet points under "What bounds it". */
export function whatBoundsIt(report: BenchReport): string {
  const growth = longTurnGrowth(report);
  return [
    timeBound(report),
    `- **\`step\`.** ${int(report.step.nsPerTransition)} ns per transition over the mixed stream (approval rounds, a repair, a cancel with synthesised results and an unexpected event, whose error texts and result lists cost more than a plain reply)${report.step.nsPerTransition <= TARGETS.stepNs ? `, within the ${TARGETS.stepNs} ns target` : `, over the ${TARGETS.stepNs} ns target`}. Each transition makes one fresh state, a draft of the input's fields filled in by plain stores (an object of changes read field by field per call site was the largest cost, at about twice today's figure), and its effect list, plus the normalised copy of the event that \`readEvent\` makes of untrusted input: plain JSON copied without a set of the path for shallow values, and a bad field's name built only when one is reported. On a loaded machine the figure rises with the load (the benchmark measures wall time).`,
    `- **Long turns.** The state holds the batch in flight and the last batch (for loop detection), not a list of every call id, so a reply costs O(batch): over ${int(report.longTurn.rounds)} rounds the later blocks cost ${fixed(growth, 2)}× the early ones (the spread between blocks is other load on the machine, not the turn's length).`,
    `- **Streaming.** ${int(report.streaming.turnkitPerSecond)} deltas/s through \`streamTurn\`: each delta costs one async-generator step of the model, the aggregator, one event object and a single-slot handoff to the reader (pull-based, so a promise resolution per delta).${report.streaming.aiSdkPerSecond === undefined ? '' : ` AI SDK 6 \`streamText\` manages ${int(report.streaming.aiSdkPerSecond)} deltas/s on the same ${int(report.streaming.deltas)} deltas.`}`,
    `- **Suspended turns.** ${int(report.suspendedHeap.bytesPerTurn)} bytes each (${int(report.suspendedHeap.jsonBytesPerTurn)} bytes as JSON): the whole suspended result a caller keeps until it resumes: the state object, its batch (the parked call, held results, decisions), the user and assistant messages, the pending call, the grants and budget counts.`,
    `- **exploreTurn.** ${int(report.explore.statesPerSecond)} states/s (${int(report.explore.states)} states in ${fixed(report.explore.seconds, 2)} s, ${fixed(report.explore.cpuSeconds, 2)} s of CPU): each edge runs \`step\` three more times (on deep-frozen copies, on unfrozen copies, on a JSON round trip) and compares the results deeply, and nodes are keyed by the JSON of the state and of the invariant monitor (since then by SHA-1 digests of those texts, and core's state invariants and parseTurnState's check run once per distinct state: see "Model checking" below). A deep equality made for plain JSON in place of \`isDeepStrictEqual\` (which it still calls for anything else), a state's JSON text and deep-frozen copy made once per state object, an event's frozen copy once per event, and \`parseTurnState\`'s check once per JSON text took this exploration from 3.4 s to 2.2 s of CPU (measured with the CPU clock on a loaded machine). What is left, by its profile: the deep comparisons, the unfrozen copies made per edge to catch a mutation, the JSON round trip, and hashing the node keys. The exploration now covers ${int(report.explore.states)} states where the ${int(TARGETS.exploreStatesPerSecond / 2)} states/s the target doubles were measured over 366 (retries, loop recoveries and batch cancels joined the state space since), and states deep in it cost more to copy and compare; the figure is wall time, so other load on the machine lowers it.`,
  ].join('\n');
}

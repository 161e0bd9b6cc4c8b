// "What bounds it" on docs/benchmarks.md: the run's own figures set beside what profiling this
// harness showed (the profile of the same run is printed under "Profile"). Keep it true when the
// code changes.
import type { BenchReport } from './report.js';
import { fastestPeer, fixed, floorOf, int, longTurnGrowth, TARGETS } from './targets.js';

/** The scenario's transitions: start, 3 replies, 2 batches, 2 compactions, the accepted output. */
const STEPS_PER_TURN = 9;

function timeBound(report: BenchReport): string {
  const inline = report.turns[0];
  const floor = floorOf(report);
  const peer = fastestPeer(report);
  if (inline === undefined) return '- **Time per turn.** No turnkit system ran.';
  const stepUs = (STEPS_PER_TURN * report.step.nsPerTransition) / 1000;
  const parts = [
    `- **Time per turn.** ${inline.name} takes ${fixed(inline.medianUs, 1)} µs (${fixed(inline.cpuUs, 1)} µs of CPU) and allocates ${fixed(inline.bytesPerTurn / 1024, 1)} KB a turn`,
    floor === undefined
      ? '.'
      : `; the floor takes ${fixed(floor.medianUs, 1)} µs and allocates ${fixed(floor.bytesPerTurn / 1024, 1)} KB, so turnkit is ${fixed(inline.medianUs / floor.medianUs, 1)}× the floor (target ${TARGETS.floorRatio}×).`,
    ` What the agent no longer pays: checking its options and building the dispatcher's configuration (tool specs, JSON Schemas) per turn, an async wrapper and a race per effect (a turn without a caller's \`signal\` cannot be cancelled while it runs, so its handlers are awaited directly), a promise for a compaction or output check that has nothing to wait for, and the abort of the turn's signal at its end (an Event dispatched to listeners that had finished).`,
    ` What it still pays, by the profile below and a heap-sampling profile of the same turn: garbage collection of what the turn allocates (the largest entry); the chokepoint, about two fifths of the allocation (per tool call the dispatcher reads the context, normalises, validates with zod, runs hooks, policy and budget stages, executes under the timeout and cancellation, shapes, with a promise per asynchronous stage); its ${STEPS_PER_TURN} \`step\` transitions (about ${fixed(stepUs, 1)} µs at the measured cost per transition, each a fresh state and a validated copy of the event); and \`scriptedModel\`, which copies each request it records and reads its \`signal\`, so the AbortSignal a turn otherwise never builds is made (as a real model that passes it to fetch would make it).`,
    ' Peers that use AsyncLocalStorage switch on async hooks for the whole process, so once they are loaded every promise costs more for every system (the timed rounds run after; the profile below is taken before); the floor makes five promises a turn, turnkit a few dozen.',
  ];
  if (peer !== undefined) {
    parts.push(
      ` The fastest peer, ${peer.name}, takes ${fixed(peer.medianUs, 1)} µs: ${fixed(peer.medianUs / inline.medianUs, 1)}× turnkit's time (target ${TARGETS.peerRatio}×). Its loop is as thin (a plain async loop, no validation of model output, no permission pipeline); a 10× lead would put turnkit at a tenth of it, about ${fixed(peer.medianUs / 10, 1)} µs, while the floor alone is ${fixed(floor?.medianUs ?? Number.NaN, 1)} µs and the chokepoint's stages for two tool calls cost more than that difference.`,
    );
  }
  return parts.join('');
}

/** The bullet points under "What bounds it". */
export function whatBoundsIt(report: BenchReport): string {
  const growth = longTurnGrowth(report);
  return [
    timeBound(report),
    `- **\`step\`.** ${int(report.step.nsPerTransition)} ns per transition over the mixed stream (approval rounds, a repair, a cancel with synthesised results and an unexpected event, whose error texts and result lists cost more than a plain reply). Each transition makes one fresh state and effect list, plus the normalised copy of the event that \`readEvent\` makes of untrusted input. A malformed event no longer builds an Error (with its stack trace) to say what is wrong with it. Reaching ${TARGETS.stepNs} ns on this mix would need fewer objects per step than an immutable, validated reducer makes.`,
    `- **Long turns.** The state holds the batch in flight and the last batch (for loop detection), not a list of every call id, so a reply costs O(batch): over ${int(report.longTurn.rounds)} rounds the later blocks cost ${fixed(growth, 2)}× the early ones (the spread between blocks is other load on the machine, not the turn's length).`,
    `- **Streaming.** ${int(report.streaming.turnkitPerSecond)} deltas/s through \`streamTurn\`: each delta costs one async-generator step of the model, the aggregator, one event object and a single-slot handoff to the reader (pull-based, so a promise resolution per delta).${report.streaming.aiSdkPerSecond === undefined ? '' : ` AI SDK 6 \`streamText\` manages ${int(report.streaming.aiSdkPerSecond)} deltas/s on the same ${int(report.streaming.deltas)} deltas.`}`,
    `- **Suspended turns.** ${int(report.suspendedHeap.bytesPerTurn)} bytes each (${int(report.suspendedHeap.jsonBytesPerTurn)} bytes as JSON): the state object, its batch (the parked call, held results, decisions), the user and assistant messages.`,
    `- **exploreTurn.** ${int(report.explore.statesPerSecond)} states/s (${int(report.explore.states)} states in ${fixed(report.explore.cpuSeconds, 2)} s of CPU): each edge runs \`step\` three more times (on deep-frozen copies, on unfrozen copies, on a JSON round trip) and compares the results deeply, and states are keyed by their JSON. Copying by assignment instead of defining each property, two fewer copies per edge, one \`JSON.stringify\` per state and one \`parseTurnState\` check per state object halved its CPU time (6.2 s to 3.3 s for this exploration, measured with the CPU clock on a loaded machine); deep comparison (\`isDeepStrictEqual\`) and the round trips are most of what is left. The exploration now covers ${int(report.explore.states)} states where the ${int(TARGETS.exploreStatesPerSecond / 2)} states/s the target doubles were measured over 366 (retries, loop recoveries and batch cancels joined the state space since), and states deep in it cost more to copy and compare.`,
  ].join('\n');
}

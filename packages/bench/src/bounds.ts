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
  const overFloor = floor === undefined ? Number.NaN : inline.medianUs / floor.medianUs;
  const parts = [
    `- **Time per turn.** ${inline.name} takes ${fixed(inline.medianUs, 1)} µs (${fixed(inline.cpuUs, 1)} µs of CPU) and allocates ${fixed(inline.bytesPerTurn / 1024, 1)} KB a turn`,
    floor === undefined
      ? '.'
      : `; the floor takes ${fixed(floor.medianUs, 1)} µs and allocates ${fixed(floor.bytesPerTurn / 1024, 1)} KB, so turnkit is ${fixed(overFloor, 1)}× the floor (target ${TARGETS.floorRatio}×).`,
    ` Its ${STEPS_PER_TURN} \`step\` transitions are about ${fixed(stepUs, 1)} µs of it at the measured cost per transition.`,
    ' The rest is the interpreter and the chokepoint: per tool call, the dispatcher runs its pipeline (context, normalise, validate with zod, before-hooks, policy, budget, execute under the timeout and the cancellation, after-hooks, shaping) with a promise per asynchronous stage;',
    ' per blocking effect, the driver awaits one handler and races the model call against the cancellation; `scriptedModel` copies each request it records and reads its `signal`, which makes the AbortSignal a turn otherwise never builds.',
    ' Garbage collection of that allocation is the largest single entry of the profile below.',
  ];
  if (peer !== undefined) {
    parts.push(
      ` The fastest peer, ${peer.name}, takes ${fixed(peer.medianUs, 1)} µs: ${fixed(peer.medianUs / inline.medianUs, 1)}× turnkit's time (target ${TARGETS.peerRatio}×). Its loop is as thin (a plain async loop, no validation of model output, no permission pipeline), so a 10× lead would put turnkit under a tenth of a loop that does less; with the floor at ${fixed(floor?.medianUs ?? Number.NaN, 1)} µs that lead is out of reach for any loop that validates, checks permissions and can be cancelled.`,
    );
  }
  return parts.join('');
}

/** The bullet points under "What bounds it". */
export function whatBoundsIt(report: BenchReport): string {
  const growth = longTurnGrowth(report);
  return [
    timeBound(report),
    `- **\`step\`.** ${int(report.step.nsPerTransition)} ns per transition over the mixed stream (approval rounds, a repair, a cancel with synthesised results and an unexpected event, whose error texts and result lists cost more than a plain reply). Each transition makes one fresh state and effect list, plus the normalised copy of the event that \`readEvent\` makes of untrusted input. Reaching ${TARGETS.stepNs} ns on this mix would need fewer objects per step than an immutable, validated reducer makes.`,
    `- **Long turns.** The state holds the batch in flight and the last batch (for loop detection), not a list of every call id, so a reply costs O(batch): over ${int(report.longTurn.rounds)} rounds the later blocks cost ${fixed(growth, 2)}× the early ones (the spread between blocks is other load on the machine, not the turn's length).`,
    `- **Streaming.** ${int(report.streaming.turnkitPerSecond)} deltas/s through \`streamTurn\`: each delta costs one async-generator step of the model, the aggregator, one event object and a single-slot handoff to the reader (pull-based, so a promise resolution per delta).${report.streaming.aiSdkPerSecond === undefined ? '' : ` AI SDK 6 \`streamText\` manages ${int(report.streaming.aiSdkPerSecond)} deltas/s on the same ${int(report.streaming.deltas)} deltas.`}`,
    `- **Suspended turns.** ${int(report.suspendedHeap.bytesPerTurn)} bytes each (${int(report.suspendedHeap.jsonBytesPerTurn)} bytes as JSON): the state object, its batch (the parked call, held results, decisions), the user and assistant messages.`,
    `- **exploreTurn.** ${int(report.explore.statesPerSecond)} states/s: each edge deep-clones and freezes the state and event and checks every invariant, and states are keyed by their JSON; it is a correctness tool, measured so a slowdown shows.`,
  ].join('\n');
}

// Where the reference system's time goes: V8's CPU profiler (what `node --cpu-prof` writes), run
// in-process over a number of turns, reduced to the functions with the most self time.
import { Session } from 'node:inspector/promises';
import type { BenchSystem } from './scenario.js';

export interface ProfileEntry {
  /** Function name and where it is (`packages/…` or a Node internal), e.g. `step packages/core/dist/turn.js:61`. */
  readonly where: string;
  /** Share of the profiled time spent in the function itself, in percent. */
  readonly selfPercent: number;
}

export interface ProfileFigure {
  readonly system: string;
  readonly turns: number;
  readonly top: readonly ProfileEntry[];
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function place(frame: ProfileNode['callFrame']): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  const at = frame.url.lastIndexOf('/packages/');
  const file = at >= 0 ? frame.url.slice(at + 1) : frame.url.replace(/^file:\/\/.*\/node_modules\//, '');
  return `${name} ${file}:${frame.lineNumber + 1}`;
}

/** The nodes called from the inspector's `Session.post` (the profiler's own work stopping and handing over the profile). */
function profilerNodes(profile: CpuProfile): Set<number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const own = new Set<number>();
  const mark = (id: number): void => {
    if (own.has(id)) return;
    own.add(id);
    for (const child of byId.get(id)?.children ?? []) mark(child);
  };
  for (const node of profile.nodes) if (node.callFrame.url === 'node:inspector') mark(node.id);
  return own;
}

/**
 * The functions with the most self time in a CPU profile, merged by name and place. The profiler's
 * own work (`Profiler.stop` handing the profile over, a native `dispatch` under `node:inspector`)
 * is not the turn's and is left out, time and total.
 */
export function topEntries(profile: CpuProfile, count: number): ProfileEntry[] {
  const byNode = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const own = profilerNodes(profile);
  const byPlace = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    if (own.has(node.id)) continue;
    const time = byNode.get(node.id) ?? 0;
    total += time;
    const key = place(node.callFrame);
    byPlace.set(key, (byPlace.get(key) ?? 0) + time);
  }
  return [...byPlace]
    .filter(([where]) => where !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([where, time]) => ({ where, selfPercent: total > 0 ? (100 * time) / total : 0 }));
}

/** Profiles `turns` turns of `system` and returns its top `count` entries by self time. */
export async function profileTurns(system: BenchSystem, turns: number, count = 12): Promise<ProfileFigure> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    for (let i = 0; i < turns; i++) await system.run();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    return { system: system.name, turns, top: topEntries(profile, count) };
  } finally {
    session.disconnect();
  }
}

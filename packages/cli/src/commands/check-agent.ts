// `turnkit check --agent FILE`: model-checks one agent (@turnkit/check's checkAgent). The file is
// loaded as `turnkit worker --agents` loads one (tsx, so TypeScript runs without a build): it
// exports `agents` (`--name` picks one when there are several), an `agent`, or a scenario; its
// `properties` export (an array of AgentProperty) adds the user's properties. With `--out` the
// first violation is written as a vitest file that fails until the agent is fixed.

import { dirname, extname, relative, resolve } from 'node:path';
import { agentFromModule, checkAgent, type AgentProperty, type CheckAgentResult, type CheckedAgent } from '@turnkit/check';
import pc from 'picocolors';
import { oneLine, UsageError } from '../errors.js';
import { duration } from '../format.js';
import { stderrBar } from '../progress-bar.js';
import { safeText } from '../safe-text.js';
import { importFile, loadScenarioFile } from '../scenario.js';

export interface CheckAgentCommandOptions {
  readonly agent: string;
  readonly name?: string;
  readonly out?: string;
  readonly depth: number;
  /** Calls per model reply (every set of up to this many distinct calls). */
  readonly callsPerReply: number;
  /** Stop once this many nodes were reached (checkAgent's `maxStates`; its default when left out). */
  readonly maxStates?: number;
}

/** Checks the agent, prints the figures and each broken property; resolves to 1 on a violation, else 0. */
export async function checkAgentCommand(o: CheckAgentCommandOptions): Promise<number> {
  const { agent, properties } = await loadAgent(o.agent, o.name);
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  out(
    `${pc.bold('turnkit check')} ${pc.dim(safeText(`· agent ${o.agent}${o.name === undefined ? '' : ` (${o.name})`} · replies of up to ${o.callsPerReply} calls · depth ≤ ${o.depth}`))}`,
  );
  const bar = stderrBar('exploring {bar} depth {value}/{total} · {states} states · {frontier} to expand');
  bar?.start(o.depth, 0, { states: 1, frontier: 1 });
  let result: CheckAgentResult;
  try {
    result = await checkAgent(agent, {
      properties,
      maxDepth: o.depth,
      maxCallsPerReply: o.callsPerReply,
      ...(o.maxStates === undefined ? {} : { maxStates: o.maxStates }),
      ...(o.out === undefined
        ? {}
        : {
            out: {
              file: o.out,
              agentImport: importPath(o.out, o.agent),
              ...(o.name === undefined ? {} : { agentName: o.name }),
              writtenBy: `turnkit check --agent ${o.agent}${o.name === undefined ? '' : ` --name ${o.name}`}`,
            },
          }),
      onProgress: (p) => bar?.update(p.depth, { states: p.states, frontier: p.frontier }),
    });
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(`${o.agent}: ${oneLine(error)}`);
    throw error;
  } finally {
    bar?.stop();
  }

  const row = (name: string, value: string): void => out(`${name.padEnd(13)}${safeText(value)}`);
  out('calls');
  for (const c of result.calls) out(`  ${safeText(`${c.tool} ${JSON.stringify(c.input)}`)} ${pc.dim(safeText(`(${c.why})`))}`);
  for (const s of result.skipped)
    out(
      pc.yellow(
        `  left out: ${safeText(`${s.tool} ${JSON.stringify(s.input)} (${s.why}): its schema refuses it; give one with inputs`)}`,
      ),
    );
  out('properties');
  for (const name of result.properties) out(`  ${safeText(name)}`);
  row('states', String(result.states));
  row('transitions', String(result.transitions));
  out(`${'depth'.padEnd(13)}${result.depth}${cutOffText(result, o)}`);
  row('time', duration(result.ms));
  row('violations', String(result.violationCount));
  if (result.violations.length === 0) {
    out(pc.green(pc.bold('✔ every property held')));
    return 0;
  }
  for (const v of result.violations) {
    out(`${pc.red(`✖ ${safeText(v.property)}`)}: ${safeText(v.message)}`);
    out(pc.dim(`    path: ${safeText(v.path.map((s) => s.label).join(' → '))}`));
  }
  if (o.out !== undefined)
    out(
      `wrote ${safeText(o.out)}: a test of the first violation that fails until the agent is fixed (npx vitest run ${safeText(o.out)})`,
    );
  return 1;
}

/** Whether the check was exhaustive, and if not what cut it off and what to do. */
function cutOffText(result: CheckAgentResult, o: CheckAgentCommandOptions): string {
  if (result.cutOff === null) return pc.green(' (exhaustive: every reachable state was expanded)');
  if (result.cutOff === 'maxDepth') return pc.yellow(` (cut off at --depth ${o.depth}: raise it to explore everything)`);
  if (result.cutOff === 'memory')
    return pc.yellow(
      ` (cut off at ${result.states.toLocaleString('en-US')} states: the check had taken most of the heap Node allows; check with a smaller limits.maxIterations, or give Node more with NODE_OPTIONS=--max-old-space-size=MB)`,
    );
  return pc.yellow(
    ` (cut off at ${result.states.toLocaleString('en-US')} states, --max-states: the turns of these limits are more than that; check with a smaller limits.maxIterations, or raise --max-states)`,
  );
}

/** The agent of `file` and the properties it exports. */
async function loadAgent(file: string, name: string | undefined): Promise<{ agent: CheckedAgent; properties: AgentProperty[] }> {
  const module: Record<string, unknown> =
    extname(file).toLowerCase() === '.json' ? { scenario: await loadScenarioFile(file) } : await importFile(file, 'agent');
  let agent: CheckedAgent;
  try {
    agent = agentFromModule(module, name);
  } catch (error) {
    throw new UsageError(`${file}: ${oneLine(error)}${name === undefined ? ' Pass --name NAME.' : ''}`);
  }
  const properties = module.properties ?? [];
  if (
    !Array.isArray(properties) ||
    properties.some((p) => p === null || typeof p !== 'object' || typeof p.name !== 'string' || typeof p.check !== 'function')
  )
    throw new UsageError(
      `${file}: \`properties\` must be an array of properties (neverWithoutApproval, atMostCalls, neverAfter or property from @turnkit/check).`,
    );
  return { agent, properties: properties as AgentProperty[] };
}

/** How a test written at `out` imports `agentFile`: a relative path that starts with `./` or `../`. */
function importPath(out: string, agentFile: string): string {
  const path = relative(dirname(resolve(out)), resolve(agentFile))
    .split('\\')
    .join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

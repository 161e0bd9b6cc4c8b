// The agents a `turnkit worker` runs, from a file: a module that exports `agents`
// (`{ [name]: { model, tools, system?, limits?, … } }`, as createWorker takes them), or a scenario
// file, which is one agent named after the file (`delete-files.ts` → `delete-files`): what
// `turnkit run --store` submitted.

import { basename, extname } from 'node:path';
import type { Model } from '@turnkit/core';
import type { AgentDefinition } from '@turnkit/store';
import { agentDefinition } from '../agent-options.js';
import { UsageError } from '../errors.js';
import { importFile, loadScenarioFile, type LoadedScenarioFile, type ModelFactory, SCRIPT_FIX } from '../scenario.js';

/** The agent name of a scenario file: its name without the extension. */
export function agentName(file: string): string {
  return basename(file, extname(file));
}

/**
 * A scenario's model for stored turns. A model function is called for each model call with
 * `startAt` = the assistant messages in the request (the model calls already answered), so a
 * scripted model continues where the turn is, in whichever process the turn runs.
 */
function positionedModel(scenario: LoadedScenarioFile, shown: string): Model {
  const model = scenario.model;
  if (model === undefined)
    throw new UsageError(`Scenario ${shown} has no model: add \`model\` to it, or run it with --provider and --model.`);
  return positioned(model, `Scenario ${shown}`);
}

/**
 * A model a stored turn can continue with, in whichever process: a function of `{ startAt }` is
 * called for each model call (see positionedModel); a ready-made scripted model is refused, since a
 * worker that continues a parked turn would start its script again (`turnkit resume` refuses it
 * for the same reason); any other model (a real one, or one that reads the transcript) is used as is.
 */
function positioned(model: Model | ModelFactory, who: string): Model {
  if (typeof model !== 'function') {
    if (isScripted(model))
      throw new UsageError(
        `${who} has a ready-made scripted model, which cannot continue a stored turn (a worker resuming it would start its script again). ${SCRIPT_FIX}`,
      );
    return model;
  }
  return {
    generate(request, options) {
      const startAt = request.messages.filter((m) => m.role === 'assistant').length;
      return model({ startAt }).generate(request, options);
    },
  };
}

/** A model from @turnkit/testing's scriptedModel (it records the requests it answered in `calls`). */
function isScripted(model: Model): boolean {
  return Array.isArray((model as { calls?: unknown }).calls);
}

/** A scenario as an agent (its input is the turn's, not the agent's). `model` replaces the scenario's (--provider). */
export function scenarioAgent(scenario: LoadedScenarioFile, shown: string, model?: Model): AgentDefinition {
  // A scenario's tree gives its agents as objects with models of their own; a worker finds the
  // agents of a stored tree by name, among the agents it was given.
  if (scenario.delegates !== undefined || scenario.handoffs !== undefined)
    throw new UsageError(
      `${shown} is a turn of many agents given as objects, which runs in this process only (turnkit run without --store). For stored turns, export \`agents\` by name and give an agent \`delegates\` and \`handoffs\` as names (docs/agents.md, "The durable store").`,
    );
  return agentDefinition(scenario, model ?? positionedModel(scenario, shown));
}

/** Loads the agents of `file` (see the top of this file). */
export async function loadAgents(file: string): Promise<Record<string, AgentDefinition>> {
  if (extname(file).toLowerCase() === '.json') {
    return { [agentName(file)]: scenarioAgent(await loadScenarioFile(file), file) };
  }
  const exports = await importFile(file, 'agents');
  const agents = exports.agents;
  if (agents === undefined) {
    if (!('scenario' in exports) && !('default' in exports))
      throw new UsageError(
        `${file} exports no agents: add \`export const agents = { name: { model, tools } }\`, or pass a scenario file.`,
      );
    return { [agentName(file)]: scenarioAgent(await loadScenarioFile(file), file) };
  }
  if (agents === null || typeof agents !== 'object' || Array.isArray(agents))
    throw new UsageError(`${file}: \`agents\` must be an object { [name]: { model, tools, … } }.`);
  const checked: Record<string, AgentDefinition> = {};
  for (const [name, agent] of Object.entries(agents as Record<string, unknown>)) {
    const model = (agent as { model?: unknown } | null)?.model;
    if (
      agent === null ||
      typeof agent !== 'object' ||
      model === null ||
      (typeof model !== 'object' && typeof model !== 'function')
    )
      throw new UsageError(`${file}: agent '${name}' must be an object with a \`model\` (and tools, system, limits, …).`);
    // A model function of `{ startAt }` (as in a scenario) continues a stored turn where it is.
    checked[name] = {
      ...(agent as AgentDefinition),
      model: positioned(model as Model | ModelFactory, `${file}: agent '${name}'`),
    };
  }
  return checked;
}

// A scenario's tree of agents (docs/agents.md, "From the command line") as runTurn takes it in this
// process: each agent's model made for this run (a model function is given the calls that agent
// answered before, so `turnkit resume` continues each agent's script where it was) and counted, so
// a suspended turn's file records where each agent's script goes on.

import type { Model } from '@turnkit/core';
import type { NamedAgent } from '@turnkit/inline';
import { makeModel } from './scenario.js';
import type { ScenarioFileAgent, ScenarioFile } from './scenario-file.js';

/** A model that counts the calls it answers. */
export function counting(inner: Model): { model: Model; count: () => number } {
  let calls = 0;
  const model: Model = {
    generate: (request, options) => {
      calls += 1;
      return inner.generate(request, options);
    },
    ...(inner.stream === undefined
      ? {}
      : {
          stream: (request, options) => {
            calls += 1;
            return inner.stream!(request, options);
          },
        }),
  };
  return { model, count: () => calls };
}

/** The agents of a scenario's tree for one run, and the model calls each has answered in all (the saved counts and this run's). */
export interface ScenarioAgents {
  readonly delegates?: readonly NamedAgent[];
  readonly handoffs?: readonly NamedAgent[];
  /** Model calls each agent (by name) answered, the earlier runs' included; agents that answered none are left out. */
  modelCalls(): Record<string, number>;
}

/**
 * The scenario's `delegates` and `handoffs`, at any depth, with each agent's model made for this
 * run: `resume` gives the suspended file and the calls each agent answered before it (the file's
 * `agentModelCalls`). An agent reached twice (a handoff back, say) is made once. A value that is
 * not an agent is passed on as it is, for runTurn to refuse, naming it.
 */
export function scenarioAgents(
  scenario: Pick<ScenarioFile, 'delegates' | 'handoffs'>,
  shown: string,
  resume?: { readonly file: string; readonly agentModelCalls: Readonly<Record<string, number>> },
): ScenarioAgents {
  const made = new Map<ScenarioFileAgent, NamedAgent>();
  const counters = new Map<string, () => number>();
  const before = (name: string): number =>
    resume !== undefined && Object.hasOwn(resume.agentModelCalls, name) ? (resume.agentModelCalls[name] ?? 0) : 0;
  const make = (agent: ScenarioFileAgent): NamedAgent => {
    if (agent === null || typeof agent !== 'object' || agent.model === undefined) return agent as unknown as NamedAgent;
    const seen = made.get(agent);
    if (seen !== undefined) return seen;
    const name = String(agent.name);
    const whose = `agent '${name}' of ${shown}`;
    const counter = counting(
      makeModel(agent.model, whose, resume === undefined ? undefined : { file: resume.file, modelCalls: before(name) }),
    );
    counters.set(name, counter.count);
    const out: { -readonly [K in keyof NamedAgent]: NamedAgent[K] } = {
      ...(agent as unknown as NamedAgent),
      model: counter.model,
    };
    // Recorded before its own agents are made: an agent that reaches back to it finds this one.
    made.set(agent, out);
    if (Array.isArray(agent.delegates)) out.delegates = agent.delegates.map(make);
    if (Array.isArray(agent.handoffs)) out.handoffs = agent.handoffs.map(make);
    return out;
  };
  const delegates = scenario.delegates?.map(make);
  const handoffs = scenario.handoffs?.map(make);
  return {
    ...(delegates === undefined ? {} : { delegates }),
    ...(handoffs === undefined ? {} : { handoffs }),
    modelCalls() {
      const out: Record<string, number> = {};
      const names = new Set([...Object.keys(resume?.agentModelCalls ?? {}), ...counters.keys()]);
      for (const name of names) {
        const calls = before(name) + (counters.get(name)?.() ?? 0);
        // defineProperty: an agent named `__proto__` is a plain key.
        if (calls > 0) Object.defineProperty(out, name, { value: calls, enumerable: true, writable: true, configurable: true });
      }
      return out;
    },
  };
}

// An agent defined once and run many times, as a server runs turns: its options are checked, its
// tools' configuration (tool specs and their JSON Schemas included) and its limits are built once
// (prepare.ts).

import { defaultHandlers } from './driver.js';
import type { EffectHandlers } from './driver-types.js';
import { checkCommon } from './options.js';
import { prepareAgent, startTurn } from './prepare.js';
import { resumeTurn } from './run.js';
import type { Agent, AgentOptions, AgentRunOptions, ResumeTurnOptions, RunTurnOptions } from './types.js';

/**
 * An agent: its model, tools and options checked and built once, then run for each input. Tool
 * definitions get a fresh dispatcher per turn (grants remembered in one turn stay in it); a
 * dispatcher passed as `tools` serves every turn.
 *
 * @example
 * const agent = createAgent({ model, tools: [add], system: 'You are a calculator.' });
 * const result = await agent.run('What is 1 + 2?');
 */
export function createAgent(options: AgentOptions, handlers: EffectHandlers = defaultHandlers): Agent {
  checkCommon(options, 'createAgent');
  for (const key of ['input', 'transcript', 'signal', 'id', 'trace'] as const) {
    if ((options as RunTurnOptions)[key] !== undefined)
      throw new TypeError(`createAgent option \`${key}\` belongs to each run: pass it to agent.run(input, { ${key} }).`);
  }
  const agent = prepareAgent(options, 'createAgent');
  return {
    async run(input, runOptions = {}) {
      if (typeof input !== 'string') throw new TypeError('agent.run(input) needs the input as a string.');
      checkRunOptions(runOptions);
      return startTurn(agent, runOptions, input, handlers);
    },
    resume(resumeOptions) {
      return resumeTurn({ ...options, ...resumeOptions } as ResumeTurnOptions, handlers);
    },
  };
}

function checkRunOptions(options: AgentRunOptions): void {
  if (options === null || typeof options !== 'object')
    throw new TypeError('agent.run(input, options): options must be an object.');
  if (options.model !== undefined) checkCommon({ model: options.model }, 'agent.run');
  if (options.transcript !== undefined && !Array.isArray(options.transcript))
    throw new TypeError('agent.run option `transcript` must be an array of messages.');
}

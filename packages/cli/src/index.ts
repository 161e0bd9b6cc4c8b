// The command line's program (`main`), its exit codes, and the shape of a scenario file.
export { main } from './program.js';
export { loadScenarioFile } from './scenario.js';
export type { ScenarioFileAgent, ScenarioFile } from './scenario-file.js';
export { EXIT } from './turn.js';

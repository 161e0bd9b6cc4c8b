export { main } from './program.js';
export { loadScenarioFile } from './scenario.js';
export type { LoadedScenarioFile, ModelFactory, ModelStart, ScenarioFile } from './scenario.js';
export { EXIT } from './turn.js';

export { main } from './program.js';
export { loadScenario } from './scenario.js';
export type { LoadedScenario, Scenario } from './scenario.js';
export { EXIT } from './turn.js';

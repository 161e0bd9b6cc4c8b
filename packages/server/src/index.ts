// Run the API and the console over a store: `serve` is the one way (see docs/console.md).
export { serve } from './server.js';
export type { RunningServer, ServeOptions } from './server.js';
export { generateToken, loadToken, TOKEN_ENV } from './token.js';

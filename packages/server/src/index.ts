export { createServer, serve } from './server.js';
export type { RunningServer, ServeOptions, ServerOptions } from './server.js';
export { routes } from './api.js';
export { generateToken, loadToken, MIN_TOKEN_LENGTH, TOKEN_ENV, tokenCheck, tokenMatches } from './token.js';
export type { LoadedToken, TokenCheck } from './token.js';
export { renderDiagram, turnDiagram } from './console/diagram.js';
export type { Diagram } from './console/diagram.js';
export * as schemas from './schemas.js';

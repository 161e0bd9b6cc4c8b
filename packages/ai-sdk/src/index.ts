// Any AI SDK provider model as a turnkit Model, and its errors as turnkit's.
export { fromAISDK, type FromAISDKOptions } from './model.js';
export type { Pricing } from './pricing.js';
export { ModelCallError, fromAISDKError } from './errors.js';

export { fromAISDK, type FromAISDKOptions } from './model.js';
export { costOf, type ModelPrice, type Pricing } from './pricing.js';
export { ModelCallError, fromAISDKError } from './errors.js';
export { toCallOptions, toPrompt, type CallSettings } from './prompt.js';
export { fromGenerateResult, toToolCall, toUsage } from './response.js';
export { toModelStreamParts } from './stream.js';

// Token prices: providers report tokens, not money, so `usage.cost` (and with it
// `limits.budget.maxCost`) needs the caller's prices. One price per model id, per million tokens.

/** What one model costs, per million tokens (in whatever currency `limits.budget.maxCost` uses). */
export interface ModelPrice {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}

/** Prices by model id: the id the provider model was made with, e.g. `openai('gpt-4o')` is `'gpt-4o'`. */
export type Pricing = { readonly [modelId: string]: ModelPrice };

const PRICE_KEYS = ['inputPerMillion', 'outputPerMillion'] as const;

const show = (value: unknown): string =>
  typeof value === 'string'
    ? `'${value}'`
    : Array.isArray(value)
      ? 'an array'
      : value === null
        ? 'null'
        : typeof value === 'object'
          ? 'an object'
          : String(value);

/**
 * Checks a `pricing` option and returns a copy (later changes to the caller's object do not
 * count). Throws a TypeError naming the bad entry and saying what to pass.
 */
export function validatePricing(pricing: unknown): Pricing {
  const example = "pricing: { 'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 } }";
  if (pricing === null || typeof pricing !== 'object' || Array.isArray(pricing)) {
    throw new TypeError(`fromAISDK: pricing must be an object of prices by model id, such as ${example}; got ${show(pricing)}.`);
  }
  const out: Record<string, ModelPrice> = {};
  for (const [modelId, price] of Object.entries(pricing)) {
    const at = `pricing[${JSON.stringify(modelId)}]`;
    if (price === null || typeof price !== 'object' || Array.isArray(price)) {
      throw new TypeError(`fromAISDK: ${at} must be an object { inputPerMillion, outputPerMillion }; got ${show(price)}.`);
    }
    for (const key of Object.keys(price)) {
      if (!(PRICE_KEYS as readonly string[]).includes(key))
        throw new TypeError(`fromAISDK: ${at} has an unknown key '${key}'; a price has inputPerMillion and outputPerMillion.`);
    }
    for (const key of PRICE_KEYS) {
      const value = (price as Record<string, unknown>)[key];
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new TypeError(
          `fromAISDK: ${at}.${key} must be a finite number >= 0 (the price of a million ${key === 'inputPerMillion' ? 'input' : 'output'} tokens); got ${show(value)}.`,
        );
      }
    }
    Object.defineProperty(out, modelId, {
      value: { inputPerMillion: (price as ModelPrice).inputPerMillion, outputPerMillion: (price as ModelPrice).outputPerMillion },
      enumerable: true,
    });
  }
  return out;
}

/** The price of `modelId`, or undefined when `pricing` has none. */
export function priceOf(pricing: Pricing, modelId: string): ModelPrice | undefined {
  return Object.hasOwn(pricing, modelId) ? pricing[modelId] : undefined;
}

/** input tokens × inputPerMillion / 1e6 + output tokens × outputPerMillion / 1e6. */
export function costOf(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  return (inputTokens * price.inputPerMillion) / 1e6 + (outputTokens * price.outputPerMillion) / 1e6;
}

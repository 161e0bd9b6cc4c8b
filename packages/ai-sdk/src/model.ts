// fromAISDK: any AI SDK LanguageModelV3 as a turnkit Model. A thin driver: build the call
// options, call the provider, map the result; every failure leaves as a ModelCallError.
import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type { Model, ModelCallOptions, ModelRequest, ModelResponse, ModelStreamPart } from '@turnkit/core';
import { abortedError, ModelCallError, fromAISDKError } from './errors.js';
import { type CallSettings, toCallOptions } from './prompt.js';
import { priceOf, type ModelPrice, type Pricing, validatePricing } from './pricing.js';
import { fromGenerateResult } from './response.js';
import { readStream, toModelStreamParts } from './stream.js';

/**
 * The options of `fromAISDK`, after the model: another model for `modelOverride`, pricing for `usage.cost`, and the
 * like.
 */
export interface FromAISDKOptions {
  /**
   * The model to use when a request carries `modelOverride` (a tool result asked for another
   * model for the next call), e.g. `(id) => openai(id)`. Without it the override is ignored: a
   * provider model object cannot switch its own model id.
   */
  readonly resolve?: (modelId: string) => LanguageModelV3;
  /** Passed on every call: temperature, maxOutputTokens, stopSequences, headers, providerOptions… */
  readonly settings?: CallSettings;
  /**
   * Prices per million tokens by model id, so `usage.cost` is real and `limits.budget.maxCost`
   * can stop a turn: cost = input tokens × inputPerMillion / 1e6 + output tokens ×
   * outputPerMillion / 1e6. The model's own id must have a price; a call to a model override
   * without one fails before it is made. Without `pricing`, cost is 0.
   */
  readonly pricing?: Pricing;
}

/**
 * Wraps an AI SDK provider model (LanguageModelV3) as a turnkit Model. `generate` and `stream`
 * throw a ModelCallError whose `turnError` says what failed and whether retrying may help. The
 * adapter never retries: one call is one HTTP request, and retrying is the interpreter's job
 * (`maxModelRetries` of runTurn/streamTurn), so there is one retry policy per turn.
 *
 * @example
 * import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
 * const ollama = createOpenAICompatible({ name: 'ollama', baseURL: 'http://localhost:11434/v1' });
 * const model = fromAISDK(ollama('qwen3:8b'), { resolve: (id) => ollama(id) });
 */
export function fromAISDK(languageModel: LanguageModelV3, options: FromAISDKOptions = {}): Model {
  checkLanguageModel(languageModel, 'fromAISDK');
  checkNoRetryOptions(options);
  const settings = options.settings ?? {};
  const pricing = options.pricing === undefined ? undefined : validatePricing(options.pricing);
  if (pricing !== undefined && priceOf(pricing, languageModel.modelId) === undefined) {
    throw new TypeError(
      `fromAISDK: pricing has no price for the model '${languageModel.modelId}' (it prices ${
        Object.keys(pricing)
          .map((id) => `'${id}'`)
          .join(', ') || 'nothing'
      }). Add pricing['${languageModel.modelId}'] = { inputPerMillion, outputPerMillion }.`,
    );
  }

  const pick = (request: ModelRequest): LanguageModelV3 => {
    if (request.modelOverride === undefined || options.resolve === undefined) return languageModel;
    let resolved: LanguageModelV3;
    try {
      resolved = options.resolve(request.modelOverride);
      checkLanguageModel(resolved, 'resolve');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ModelCallError(
        {
          kind: 'invalid_model_override',
          message: `Could not resolve the model override '${request.modelOverride}': ${reason}`,
          retryable: false,
          data: { modelOverride: request.modelOverride },
        },
        { cause: error },
      );
    }
    return resolved;
  };

  /** The price of the model a call goes to; a priced adapter refuses an unpriced model before calling it. */
  const priceFor = (model: LanguageModelV3): ModelPrice | undefined => {
    if (pricing === undefined) return undefined;
    const price = priceOf(pricing, model.modelId);
    if (price !== undefined) return price;
    throw new ModelCallError({
      kind: 'unpriced_model',
      message: `The model '${model.modelId}' has no price in fromAISDK's pricing, so its cost could not be counted against the budget; the call was not made. Add pricing['${model.modelId}'].`,
      retryable: false,
      data: { modelId: model.modelId },
    });
  };

  const prepare = (
    request: ModelRequest,
    signal: AbortSignal,
  ): { model: LanguageModelV3; callOptions: LanguageModelV3CallOptions; price: ModelPrice | undefined } => {
    const model = pick(request);
    const price = priceFor(model);
    try {
      return { model, callOptions: toCallOptions(request, signal, settings), price };
    } catch (error) {
      throw new ModelCallError(
        { kind: 'invalid_request', message: error instanceof Error ? error.message : String(error), retryable: false },
        { cause: error },
      );
    }
  };

  return {
    async generate(request: ModelRequest, { signal }: ModelCallOptions): Promise<ModelResponse> {
      const { model, callOptions, price } = prepare(request, signal);
      try {
        const result = await model.doGenerate(callOptions);
        return fromGenerateResult(result, model.modelId, price);
      } catch (error) {
        throw asModelCallError(error, signal);
      }
    },

    async *stream(request: ModelRequest, { signal }: ModelCallOptions): AsyncGenerator<ModelStreamPart> {
      const { model, callOptions, price } = prepare(request, signal);
      try {
        const result = await model.doStream(callOptions);
        yield* toModelStreamParts(readStream(result.stream), model.modelId, price);
      } catch (error) {
        throw asModelCallError(error, signal);
      }
    },
  };
}

function asModelCallError(error: unknown, signal: AbortSignal): ModelCallError {
  // Whatever the provider throws once the signal fired (an AbortError, a closed stream) is a cancellation.
  if (signal.aborted) return new ModelCallError(abortedError(signal), { cause: error });
  return error instanceof ModelCallError ? error : new ModelCallError(fromAISDKError(error), { cause: error });
}

function checkLanguageModel(value: unknown, where: string): asserts value is LanguageModelV3 {
  const version =
    typeof value === 'object' && value !== null ? (value as { specificationVersion?: unknown }).specificationVersion : undefined;
  if (version === 'v3') return;
  const got =
    typeof value === 'string'
      ? `the string '${value}'`
      : version === undefined
        ? describeValue(value)
        : `a model with specificationVersion '${String(version)}'`;
  throw new TypeError(
    `${where}: expected an AI SDK LanguageModelV3 (specificationVersion 'v3'), got ${got}. Pass a provider model object such as openai('gpt-4o') from @ai-sdk/openai@3 or newer.`,
  );
}

/** Earlier versions retried inside the adapter; a caller still passing those options is told where retries live now. */
function checkNoRetryOptions(options: FromAISDKOptions): void {
  for (const name of ['maxRetries', 'retryDelay']) {
    if (name in options) {
      throw new TypeError(
        `fromAISDK: the option '${name}' was removed; the adapter no longer retries. Pass maxModelRetries (and modelRetryBackoffMs) to runTurn or streamTurn instead.`,
      );
    }
  }
}

function describeValue(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`;
}

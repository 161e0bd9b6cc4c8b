// fromAISDK: any AI SDK LanguageModelV3 as a turnkit Model. A thin driver: build the call
// options, call the provider, map the result; every failure leaves as a ModelCallError.
import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type { Model, ModelCallOptions, ModelRequest, ModelResponse, ModelStreamPart, TurnError } from '@turnkit/core';
import { abortedError, ModelCallError, toTurnError } from './errors.js';
import { type CallSettings, toCallOptions } from './prompt.js';
import { fromGenerateResult } from './response.js';
import { readStream, toModelStreamParts } from './stream.js';

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
   * Times a call is retried after a failure the provider marks retryable (429, 5xx, network),
   * before any stream output. Default 0: the error is thrown and the caller decides.
   */
  readonly maxRetries?: number;
  /** Milliseconds to wait before retry `attempt` (1-based). Default: the provider's Retry-After, else 2 s doubling per attempt. */
  readonly retryDelay?: (attempt: number, error: TurnError) => number;
}

/**
 * Wraps an AI SDK provider model (LanguageModelV3) as a turnkit Model. `generate` and `stream`
 * throw a ModelCallError whose `turnError` says what failed and whether retrying may help.
 *
 * @example
 * import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
 * const ollama = createOpenAICompatible({ name: 'ollama', baseURL: 'http://localhost:11434/v1' });
 * const model = fromAISDK(ollama('qwen3:8b'), { resolve: (id) => ollama(id) });
 */
export function fromAISDK(languageModel: LanguageModelV3, options: FromAISDKOptions = {}): Model {
  checkLanguageModel(languageModel, 'fromAISDK');
  const maxRetries = options.maxRetries ?? 0;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new RangeError(`fromAISDK: maxRetries must be a whole number of 0 or more, got ${String(maxRetries)}.`);
  }
  const settings = options.settings ?? {};
  const retryDelay = options.retryDelay ?? defaultRetryDelay;

  const pick = (request: ModelRequest): LanguageModelV3 => {
    if (request.modelOverride === undefined || options.resolve === undefined) return languageModel;
    let resolved: LanguageModelV3;
    try {
      resolved = options.resolve(request.modelOverride);
      checkLanguageModel(resolved, 'resolve');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ModelCallError(
        { kind: 'invalid_model_override', message: `Could not resolve the model override '${request.modelOverride}': ${reason}`, retryable: false, data: { modelOverride: request.modelOverride } },
        { cause: error },
      );
    }
    return resolved;
  };

  const prepare = (request: ModelRequest, signal: AbortSignal): { model: LanguageModelV3; callOptions: LanguageModelV3CallOptions } => {
    const model = pick(request);
    try {
      return { model, callOptions: toCallOptions(request, signal, settings) };
    } catch (error) {
      throw new ModelCallError({ kind: 'invalid_request', message: error instanceof Error ? error.message : String(error), retryable: false }, { cause: error });
    }
  };

  const retrying = <T>(call: () => PromiseLike<T>, signal: AbortSignal): Promise<T> => withRetries(call, signal, maxRetries, retryDelay);

  return {
    async generate(request: ModelRequest, { signal }: ModelCallOptions): Promise<ModelResponse> {
      const { model, callOptions } = prepare(request, signal);
      try {
        const result = await retrying(() => model.doGenerate(callOptions), signal);
        return fromGenerateResult(result, model.modelId);
      } catch (error) {
        throw asModelCallError(error, signal);
      }
    },

    async *stream(request: ModelRequest, { signal }: ModelCallOptions): AsyncGenerator<ModelStreamPart> {
      const { model, callOptions } = prepare(request, signal);
      try {
        const result = await retrying(() => model.doStream(callOptions), signal);
        yield* toModelStreamParts(readStream(result.stream), model.modelId);
      } catch (error) {
        throw asModelCallError(error, signal);
      }
    },
  };
}

async function withRetries<T>(call: () => PromiseLike<T>, signal: AbortSignal, maxRetries: number, retryDelay: (attempt: number, error: TurnError) => number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const turnError = toTurnError(error);
      if (attempt > maxRetries || turnError.retryable !== true || signal.aborted) {
        if (attempt === 1) throw error;
        throw new ModelCallError({ ...turnError, message: `${turnError.message} Gave up after ${attempt} attempts.` }, { cause: error });
      }
      await sleep(retryDelay(attempt, turnError), signal);
    }
  }
}

/** The provider's Retry-After when it sent one (capped at a minute), else 2 s, 4 s, 8 s… */
function defaultRetryDelay(attempt: number, error: TurnError): number {
  const data = error.data;
  const hinted = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as { retryAfterMs?: unknown }).retryAfterMs : undefined;
  if (typeof hinted === 'number' && hinted <= 60_000) return hinted;
  return 2000 * 2 ** (attempt - 1);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function asModelCallError(error: unknown, signal: AbortSignal): ModelCallError {
  // Whatever the provider throws once the signal fired (an AbortError, a closed stream) is a cancellation.
  if (signal.aborted) return new ModelCallError(abortedError(signal), { cause: error });
  return error instanceof ModelCallError ? error : new ModelCallError(toTurnError(error), { cause: error });
}

function checkLanguageModel(value: unknown, where: string): asserts value is LanguageModelV3 {
  const version = typeof value === 'object' && value !== null ? (value as { specificationVersion?: unknown }).specificationVersion : undefined;
  if (version === 'v3') return;
  const got = typeof value === 'string' ? `the string '${value}'` : version === undefined ? describeValue(value) : `a model with specificationVersion '${String(version)}'`;
  throw new TypeError(
    `${where}: expected an AI SDK LanguageModelV3 (specificationVersion 'v3'), got ${got}. Pass a provider model object such as openai('gpt-4o') from @ai-sdk/openai@3 or newer.`,
  );
}

function describeValue(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`;
}

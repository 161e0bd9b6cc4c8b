// `--provider`: a real model through @turnkit/ai-sdk. Keys come from the provider's usual
// environment variable; a missing key is a UsageError that names the variable to set.

import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fromAISDK } from '@turnkit/ai-sdk';
import type { Model } from '@turnkit/core';
import { UsageError } from './errors.js';
import { definedProps } from '@turnkit/core/internal';

export const PROVIDERS = ['openai', 'anthropic', 'openai-compatible'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export interface ProviderOptions {
  readonly provider: ProviderName;
  readonly model: string;
  readonly baseUrl?: string;
}

const KEY_VARIABLE: Record<ProviderName, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'OPENAI_COMPATIBLE_API_KEY',
};

/** The turnkit Model for `--provider … --model … [--base-url …]`. */
export function providerModel(options: ProviderOptions, env: NodeJS.ProcessEnv = process.env): Model {
  const variable = KEY_VARIABLE[options.provider];
  const key = env[variable];
  const baseURL = options.baseUrl;
  switch (options.provider) {
    case 'openai':
      if (key === undefined || key === '')
        throw new UsageError(`${variable} is not set: set it to your OpenAI API key to use --provider openai.`);
      return fromAISDK(createOpenAI({ apiKey: key, ...definedProps({ baseURL }) })(options.model));
    case 'anthropic':
      if (key === undefined || key === '')
        throw new UsageError(`${variable} is not set: set it to your Anthropic API key to use --provider anthropic.`);
      return fromAISDK(createAnthropic({ apiKey: key, ...definedProps({ baseURL }) })(options.model));
    case 'openai-compatible': {
      if (baseURL === undefined)
        throw new UsageError(
          '--provider openai-compatible needs --base-url, e.g. --base-url http://localhost:11434/v1 for Ollama.',
        );
      const provider = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        includeUsage: true,
        ...(key === undefined || key === '' ? {} : { apiKey: key }),
      });
      return fromAISDK(provider(options.model));
    }
  }
}

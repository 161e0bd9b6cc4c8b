// `--provider`: a real model through @turnkit/ai-sdk. Keys come from the provider's usual
// environment variable; a missing key is a UsageError that names the variable to set. Each
// provider package is an optional peer, loaded only when its `--provider` is given: a missing one
// is a UsageError that names what to install.

import type { createAnthropic } from '@ai-sdk/anthropic';
import type { createOpenAI } from '@ai-sdk/openai';
import type { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { Model } from '@turnkit/core';
import { definedProps } from '@turnkit/core/internal';
import { UsageError } from './errors.js';
import { loadPeer } from './peer.js';

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
export async function providerModel(options: ProviderOptions, env: NodeJS.ProcessEnv = process.env): Promise<Model> {
  // Loaded here, not when the CLI starts: the scenario's own model needs none of it.
  const { fromAISDK } = await import('@turnkit/ai-sdk');
  const variable = KEY_VARIABLE[options.provider];
  const key = env[variable];
  const baseURL = options.baseUrl;
  switch (options.provider) {
    case 'openai': {
      if (key === undefined || key === '')
        throw new UsageError(`${variable} is not set: set it to your OpenAI API key to use --provider openai.`);
      const { createOpenAI: create } = (await loadPeer('@ai-sdk/openai', '--provider openai')) as {
        createOpenAI: typeof createOpenAI;
      };
      return fromAISDK(create({ apiKey: key, ...definedProps({ baseURL }) })(options.model));
    }
    case 'anthropic': {
      if (key === undefined || key === '')
        throw new UsageError(`${variable} is not set: set it to your Anthropic API key to use --provider anthropic.`);
      const { createAnthropic: create } = (await loadPeer('@ai-sdk/anthropic', '--provider anthropic')) as {
        createAnthropic: typeof createAnthropic;
      };
      return fromAISDK(create({ apiKey: key, ...definedProps({ baseURL }) })(options.model));
    }
    case 'openai-compatible': {
      if (baseURL === undefined)
        throw new UsageError(
          '--provider openai-compatible needs --base-url, e.g. --base-url http://localhost:11434/v1 for Ollama.',
        );
      const { createOpenAICompatible: create } = (await loadPeer(
        '@ai-sdk/openai-compatible',
        '--provider openai-compatible',
      )) as { createOpenAICompatible: typeof createOpenAICompatible };
      const provider = create({
        name: 'openai-compatible',
        baseURL,
        includeUsage: true,
        ...(key === undefined || key === '' ? {} : { apiKey: key }),
      });
      return fromAISDK(provider(options.model));
    }
  }
}

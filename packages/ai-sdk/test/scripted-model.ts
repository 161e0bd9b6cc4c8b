// A hand-written LanguageModelV3 for mapping cases the OpenAI-compatible provider never produces
// (a complete tool-call part with no input parts, text-encoded input, provider-executed tools).
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';

export const usage = (input?: number, output?: number): LanguageModelV3Usage => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: undefined, reasoning: undefined },
});

export function scriptedModel(script: {
  readonly generate?: Partial<LanguageModelV3GenerateResult>;
  readonly stream?: readonly LanguageModelV3StreamPart[];
  readonly modelId?: string;
}): LanguageModelV3 & { readonly calls: LanguageModelV3CallOptions[] } {
  const calls: LanguageModelV3CallOptions[] = [];
  return {
    specificationVersion: 'v3',
    provider: 'scripted',
    modelId: script.modelId ?? 'scripted-1',
    supportedUrls: {},
    calls,
    async doGenerate(options) {
      calls.push(options);
      return { content: [], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(), warnings: [], ...script.generate };
    },
    async doStream(options) {
      calls.push(options);
      const parts = script.stream ?? [];
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

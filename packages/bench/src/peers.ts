// The peers: each runs the scenario against the peer's own
// scripted/mock model, fully in-process, and reports its tool results and final text.
// The peer packages are imported from packages/bench/.peers (see peer-install.ts); the module
// shapes below name only what is used here.
import { ADD_INPUTS, type BenchSystem, type TurnOutcome } from './scenario.js';
import { importPeer } from './peer-install.js';

interface ZodModule {
  readonly z: { object(shape: Record<string, unknown>): unknown; number(): unknown };
}

interface AiSdkStep {
  readonly toolResults: readonly { readonly output: unknown }[];
}
interface AiSdkModule {
  generateText(options: object): Promise<{ readonly text: string; readonly steps: readonly AiSdkStep[] }>;
  streamText(options: object): {
    readonly fullStream: AsyncIterable<{ readonly type: string }>;
    consumeStream(): Promise<void>;
    readonly steps: PromiseLike<readonly AiSdkStep[]>;
    readonly text: PromiseLike<string>;
  };
  tool(definition: object): unknown;
  stepCountIs(count: number): unknown;
}
interface AiSdkTestModule {
  readonly MockLanguageModelV3: new (options: object) => unknown;
  convertArrayToReadableStream<T>(chunks: readonly T[]): ReadableStream<T>;
}

interface OpenAIAgentsModule {
  readonly Agent: new (options: object) => unknown;
  readonly Runner: new (
    options: object,
  ) => {
    run(
      agent: unknown,
      input: string,
      options: object,
    ): Promise<{
      readonly finalOutput: unknown;
      readonly newItems: readonly { readonly type: string; readonly output?: unknown }[];
    }>;
  };
  tool(definition: object): unknown;
}
interface OpenAIAgentsTestingModule {
  readonly ScriptedModel: new (script: readonly unknown[][]) => { assertComplete(): void };
  assistantMessage(text: string): unknown;
  functionCall(name: string, input: object, options: { callId: string }): unknown;
}

interface LangChainMessage {
  readonly type?: string;
  readonly content: unknown;
  _getType?(): string;
}
interface LangChainModule {
  createAgent(options: object): {
    invoke(input: object, config: object): Promise<{ readonly messages: readonly LangChainMessage[] }>;
  };
  tool(fn: (input: { a: number; b: number }) => Promise<string>, options: object): unknown;
}
interface LangChainMessagesModule {
  readonly AIMessage: new (content: string) => unknown;
}
interface LangChainTestingModule {
  fakeModel(): {
    respondWithTools(calls: readonly object[]): unknown;
    respond(message: unknown): unknown;
  };
}

interface PiContent {
  readonly type: string;
  readonly text?: string;
}
interface PiMessage {
  readonly role: string;
  readonly content: string | readonly PiContent[];
}
interface PiAiModule {
  readonly Type: { Object(shape: object): unknown; Number(): unknown };
  registerFauxProvider(options: object): { getModel(): unknown; setResponses(responses: readonly unknown[]): void };
  fauxAssistantMessage(content: unknown, options?: object): unknown;
  fauxToolCall(name: string, input: object, options: { id: string }): unknown;
  readonly streamSimple: unknown;
}
interface PiAgentCoreModule {
  runAgentLoop(
    prompts: readonly object[],
    context: object,
    config: object,
    emit: () => void,
    signal: undefined,
    stream: unknown,
  ): Promise<readonly PiMessage[]>;
}

const ROUNDS = ADD_INPUTS.length + 1;
const add = async ({ a, b }: { a: number; b: number }): Promise<number> => a + b;

const aiUsage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function aiSdkOutcome(steps: readonly AiSdkStep[], text: string): TurnOutcome {
  return { toolResults: steps.flatMap((s) => s.toolResults).map((r) => r.output), text };
}

async function aiSdkSystems(): Promise<BenchSystem[]> {
  const [ai, aiTest, { z }] = await Promise.all([
    importPeer<AiSdkModule>('ai6'),
    importPeer<AiSdkTestModule>('ai6/test'),
    importPeer<ZodModule>('zod'),
  ]);
  const tools = { add: ai.tool({ inputSchema: z.object({ a: z.number(), b: z.number() }), execute: add }) };
  const generated = (i: number): object => {
    const input = ADD_INPUTS[i];
    return input
      ? {
          content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'add', input: JSON.stringify(input) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: aiUsage,
          warnings: [],
        }
      : {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: aiUsage,
          warnings: [],
        };
  };
  const streamed = (i: number): object[] => {
    const input = ADD_INPUTS[i];
    return input
      ? [
          { type: 'tool-call', toolCallId: `c${i}`, toolName: 'add', input: JSON.stringify(input) },
          { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: aiUsage },
        ]
      : [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'done' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: aiUsage },
        ];
  };
  const stopWhen = ai.stepCountIs(10);
  return [
    {
      name: 'AI SDK 6 generateText',
      kind: 'peer',
      run: async () => {
        let n = 0;
        const model = new aiTest.MockLanguageModelV3({ doGenerate: async () => generated(n++) });
        const r = await ai.generateText({ model, tools, prompt: 'go', stopWhen });
        return aiSdkOutcome(r.steps, r.text);
      },
    },
    {
      name: 'AI SDK 6 streamText',
      kind: 'peer',
      run: async () => {
        let n = 0;
        const model = new aiTest.MockLanguageModelV3({
          doStream: async () => ({ stream: aiTest.convertArrayToReadableStream(streamed(n++)) }),
        });
        const r = ai.streamText({ model, tools, prompt: 'go', stopWhen });
        await r.consumeStream();
        return aiSdkOutcome(await r.steps, await r.text);
      },
    },
  ];
}

async function openAIAgentsSystem(): Promise<BenchSystem> {
  const [agents, testing, { z }] = await Promise.all([
    importPeer<OpenAIAgentsModule>('@openai/agents'),
    importPeer<OpenAIAgentsTestingModule>('@openai/agents/testing'),
    importPeer<ZodModule>('zod'),
  ]);
  const addTool = agents.tool({
    name: 'add',
    description: 'add',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: async (input: { a: number; b: number }) => String(await add(input)),
  });
  const script = (): unknown[][] => [
    ...ADD_INPUTS.map((input, i) => [testing.functionCall('add', input, { callId: `c${i}` })]),
    [testing.assistantMessage('done')],
  ];
  const runner = new agents.Runner({ tracingDisabled: true });
  return {
    name: 'OpenAI Agents Runner.run',
    kind: 'peer',
    run: async () => {
      const model = new testing.ScriptedModel(script());
      const agent = new agents.Agent({ name: 'a', model, tools: [addTool] });
      const r = await runner.run(agent, 'go', { maxTurns: 10 });
      model.assertComplete();
      return {
        toolResults: r.newItems.filter((item) => item.type === 'tool_call_output_item').map((item) => item.output),
        text: typeof r.finalOutput === 'string' ? r.finalOutput : JSON.stringify(r.finalOutput),
      };
    },
  };
}

async function langChainSystem(): Promise<BenchSystem> {
  const [langchain, messages, testing, { z }] = await Promise.all([
    importPeer<LangChainModule>('langchain'),
    importPeer<LangChainMessagesModule>('@langchain/core/messages'),
    importPeer<LangChainTestingModule>('@langchain/core/testing'),
    importPeer<ZodModule>('zod'),
  ]);
  const addTool = langchain.tool(async (input) => String(await add(input)), {
    name: 'add',
    description: 'add',
    schema: z.object({ a: z.number(), b: z.number() }),
  });
  const typeOf = (m: LangChainMessage): string => m.type ?? m._getType?.() ?? 'unknown';
  return {
    name: 'LangChain createAgent',
    kind: 'peer',
    run: async () => {
      const model = testing.fakeModel();
      ADD_INPUTS.forEach((input, i) => {
        model.respondWithTools([{ name: 'add', args: input, id: `c${i}` }]);
      });
      model.respond(new messages.AIMessage('done'));
      const agent = langchain.createAgent({ model, tools: [addTool] });
      const r = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, { recursionLimit: 25 });
      const last = r.messages.at(-1);
      return {
        toolResults: r.messages.filter((m) => typeOf(m) === 'tool').map((m) => m.content),
        text: last && typeOf(last) === 'ai' && typeof last.content === 'string' ? last.content : JSON.stringify(last?.content),
      };
    },
  };
}

function piText(message: PiMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

async function piSystem(): Promise<BenchSystem> {
  const [piAi, piAgent] = await Promise.all([
    importPeer<PiAiModule>('@mariozechner/pi-ai'),
    importPeer<PiAgentCoreModule>('@mariozechner/pi-agent-core'),
  ]);
  // One delta per block, as in the recipe (the faux default splits text into 3-5 character tokens).
  const faux = piAi.registerFauxProvider({ tokenSize: { min: 1e9, max: 1e9 } });
  const config = { model: faux.getModel(), convertToLlm: (m: unknown) => m };
  const addTool = {
    name: 'add',
    label: 'add',
    description: 'add',
    parameters: piAi.Type.Object({ a: piAi.Type.Number(), b: piAi.Type.Number() }),
    execute: async (_id: string, input: { a: number; b: number }) => ({
      content: [{ type: 'text', text: String(await add(input)) }],
      details: {},
    }),
  };
  const script = (): unknown[] => [
    ...ADD_INPUTS.map((input, i) =>
      piAi.fauxAssistantMessage(piAi.fauxToolCall('add', input, { id: `c${i}` }), { stopReason: 'toolUse' }),
    ),
    piAi.fauxAssistantMessage('done'),
  ];
  return {
    name: 'pi-agent-core runAgentLoop',
    kind: 'peer',
    run: async () => {
      // The faux provider holds one global script, so pi turns never overlap (the harness is sequential).
      faux.setResponses(script());
      const context = { systemPrompt: '', messages: [], tools: [addTool] };
      const prompt = [{ role: 'user', content: 'go', timestamp: 0 }];
      const messages = await piAgent.runAgentLoop(prompt, context, config, () => {}, undefined, piAi.streamSimple);
      return {
        toolResults: messages.filter((m) => m.role === 'toolResult').map(piText),
        text: piText(messages.at(-1)),
      };
    },
  };
}

/** Loads every peer system from .peers (call ensurePeers first). Order is the table's order. */
export async function loadPeerSystems(): Promise<BenchSystem[]> {
  const [aiSdk, oai, lg, pi] = await Promise.all([aiSdkSystems(), openAIAgentsSystem(), langChainSystem(), piSystem()]);
  if (ROUNDS !== 3) throw new Error(`The scenario has ${ROUNDS} model calls; the peer ports assume 3.`);
  return [...aiSdk, oai, lg, pi];
}

/**
 * AI SDK 6 `streamText` over one model reply of `deltas` text deltas, read to the end through
 * `fullStream` by a consumer that only counts. The chunks are built before the returned function
 * is timed; it reports the deltas seen and the final text so the caller can check nothing was lost.
 */
export async function aiSdkDeltaStream(deltas: number): Promise<() => Promise<{ deltas: number; text: string }>> {
  const [ai, aiTest] = await Promise.all([importPeer<AiSdkModule>('ai6'), importPeer<AiSdkTestModule>('ai6/test')]);
  const chunks: object[] = [{ type: 'text-start', id: 't' }];
  for (let i = 0; i < deltas; i++) chunks.push({ type: 'text-delta', id: 't', delta: 'x' });
  chunks.push({ type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: aiUsage });
  return async () => {
    const model = new aiTest.MockLanguageModelV3({
      doStream: async () => ({ stream: aiTest.convertArrayToReadableStream(chunks) }),
    });
    const r = ai.streamText({ model, prompt: 'go' });
    let seen = 0;
    for await (const part of r.fullStream) if (part.type === 'text-delta') seen++;
    return { deltas: seen, text: await r.text };
  };
}

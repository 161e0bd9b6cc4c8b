// The OpenTelemetry GenAI semantic conventions this package follows, copied in as constants: the
// conventions are still marked "development", so @opentelemetry/semantic-conventions keeps them
// in its unstable entry, and a rename there must not rename turnkit's spans without a release here.

/** The version of the semantic conventions whose GenAI names these are. */
export const SEMCONV_VERSION = '1.41.0';

/** Attribute names (GenAI registry and the general `error.type`). */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolDescription: 'gen_ai.tool.description',
  /** Opt-in (content): the tool's input as JSON. */
  toolCallArguments: 'gen_ai.tool.call.arguments',
  /** Opt-in (content): the tool's result as JSON. */
  toolCallResult: 'gen_ai.tool.call.result',
  /** Opt-in (content): the messages sent to the model, as JSON. */
  inputMessages: 'gen_ai.input.messages',
  /** Opt-in (content): the model's reply (or the turn's answer), as JSON. */
  outputMessages: 'gen_ai.output.messages',
  /** Opt-in (content): the system prompt, as JSON. */
  systemInstructions: 'gen_ai.system_instructions',
  errorType: 'error.type',
} as const;

/** `gen_ai.operation.name` values turnkit emits. */
export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;

/** turnkit's own attributes (not part of the conventions), under the `turnkit.` namespace. */
export const TURNKIT_ATTR = {
  /** How an activation ended: stopped, failed, cancelled or suspended. */
  turnStatus: 'turnkit.turn.status',
  stopReason: 'turnkit.turn.stop_reason',
  /** The round (1 for the first model call) a model call belongs to. */
  iteration: 'turnkit.turn.iteration',
  /** The retry number of a model call (absent on a first try). */
  modelAttempt: 'turnkit.model.attempt',
  /** Tries of a tool call, the first included. */
  toolAttempts: 'turnkit.tool.attempts',
  /** Why a saved trace context could not be linked. */
  linkError: 'turnkit.trace_link.error',
  /** On a link: why it was made (`resumed`). */
  linkReason: 'turnkit.link.reason',
} as const;

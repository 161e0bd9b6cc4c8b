// The conformance scenarios of @turnkit/testing, replayed over HTTP: each scripted model reply
// becomes the fake server's answer (JSON for runTurn, SSE for streamTurn), and the interpreter
// talks to fromAISDK(createOpenAICompatible(...)) only. The scripted model still decides the
// replies and records the requests, so every scenario's own checks apply unchanged.
import { fromAISDK } from '@turnkit/ai-sdk';
import type { Model } from '@turnkit/core';
import { resumeTurn, runTurn, type TurnResult } from '@turnkit/inline';
import { resumeStreamTurn, streamTurn, type TurnStream } from '@turnkit/stream';
import { scenarios, type FakeOpenAIServer, startFakeOpenAIServer } from '@turnkit/testing';
import { type ConformanceResume, type ConformanceRun, runScenario } from '@turnkit/testing/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { languageModelFor } from './setup.js';
import { overHttp } from './wire.js';

let server: FakeOpenAIServer;
let scriptedReplies = 0;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
  scriptedReplies = 0;
});
afterEach(async () => {
  await server.close();
});

/** Reads every event as a consumer would, then returns the result. */
async function readToEnd(stream: TurnStream<TurnResult>): Promise<TurnResult> {
  for await (const event of stream) void event;
  return stream.result;
}

/** The run's options with the scripted model sent over HTTP (see overHttp); counts the replies. */
const http = <O extends { readonly model: Model }>(options: O): O => {
  const script = options.model;
  const counted: Model = { generate: (request, callOptions) => ((scriptedReplies += 1), script.generate(request, callOptions)) };
  return { ...options, model: overHttp(counted, fromAISDK(languageModelFor(server)), server) };
};

const inline: [ConformanceRun, ConformanceResume] = [(options) => runTurn(http(options)), (options) => resumeTurn(http(options))];
const streamed: [ConformanceRun, ConformanceResume] = [
  (options) => readToEnd(streamTurn(http(options))),
  (options) => readToEnd(resumeStreamTurn(http(options))),
];

/**
 * Scenarios that cannot go over HTTP, and why. Their scripts make the model *throw* in-process (a
 * plain Error for kind model_error, an object carrying a turnError, running past the script, an
 * AbortError after aborting): there is no reply to translate, and no HTTP answer makes the adapter
 * produce those kinds. Their HTTP counterparts (500, 429, malformed replies, an abort mid-call)
 * are in turns.test.ts.
 */
const throwsInProcess = ['model failure', 'model failure with a TurnError', 'script overrun', 'cancel during a model call'];

/**
 * Streamed only: `@ai-sdk/openai-compatible`'s streaming tool-call tracker gives an id repeated in
 * one reply a freshly generated id of its own, so the repeat never reaches turnkit and the second
 * call's id is the provider's, not core's `x~2`. (The JSON path keeps the wire ids, and core
 * derives the id as the scenario expects.) Both calls still run once, each with its own result.
 */
const providerRenamesDuplicateIds = ['call ids: one id twice in a reply'];

const overHttpScenarios = (skip: readonly string[]) =>
  scenarios.filter((s) => !skip.includes(s.name)).map((s) => [s.name, s] as const);

it('leaves out only scenarios that exist, and replays the rest', () => {
  const names = scenarios.map((s) => s.name);
  const left = [...throwsInProcess, ...providerRenamesDuplicateIds];
  for (const name of left) expect(names).toContain(name);
  expect(overHttpScenarios(left)).toHaveLength(scenarios.length - left.length);
});

describe.each([
  ['runTurn', inline, throwsInProcess],
  ['streamTurn', streamed, [...throwsInProcess, ...providerRenamesDuplicateIds]],
] as const)('conformance over HTTP: %s', (_name, [run, resume], skip) => {
  it.each(overHttpScenarios(skip))('%s', async (_n, scenario) => {
    await runScenario(scenario, run, { resume });
    // Every model reply of the scenario came through the server, one request each.
    expect(scriptedReplies).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(scriptedReplies);
  });
});

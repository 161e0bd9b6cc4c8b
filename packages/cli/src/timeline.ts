// The readable timeline of `turnkit run` / `turnkit resume`. It only watches the turn (runTurn's
// onStep and onEffect hooks, tool timings, stream deltas) and writes lines; it never changes what
// the turn does. Colour comes from picocolors (off when stdout is not a TTY or NO_COLOR is set);
// the spinner runs on stderr and only on a TTY. Every string that comes from the model, a tool, a
// file or the command line goes through safeText (or preview, which uses it) before it is printed.

import type { Effect, Message, ParkedCall, ToolCall, ToolResult, TraceEntry, TurnEvent } from '@turnkit/core';
import { activeTurn } from '@turnkit/core/internal';
import type { ToolDefinition } from '@turnkit/dispatch';
import type { TurnResult } from '@turnkit/inline';
import pc from 'picocolors';
import yoctoSpinner, { type Spinner } from 'yocto-spinner';
import { duration, indent, plural, preview } from './format.js';
import { safeText } from './safe-text.js';

/** Model text (answers, streamed deltas): newlines and tabs kept, every other control character escaped. */
const safeLines = (text: string): string => safeText(text, { multiline: true });

export interface TimelineOptions {
  readonly write: (text: string) => void;
  /** Show a spinner while the model or tools work (a TTY only). */
  readonly spinner: boolean;
  /** Text arrives as deltas (`--stream`): print them as they come, not the whole message. */
  readonly streaming: boolean;
  /** The scenario has an output schema: say when the final answer passes it. */
  readonly checksOutput: boolean;
}

/** Watches a turn and writes its timeline. */
export class Timeline {
  readonly #write: (text: string) => void;
  readonly #useSpinner: boolean;
  readonly #streaming: boolean;
  readonly #checksOutput: boolean;
  #spinner: Spinner | null = null;
  #modelCall = 0;
  #callStarted = 0;
  #final = false;
  #streamedText = false;
  readonly #toolMs = new Map<string, number>();
  /** Parked calls already decided (an approval notice only lists the others). */
  #decided = new Set<string>();
  /** Written before every line: the path of the child turn being shown (`researcher │ `), '' for the turn's own. */
  #prefix = '';
  /** The agent of each child turn, by its transfer_task call id (a child's events name the call only). */
  readonly #childAgents = new Map<string, string>();

  constructor(options: TimelineOptions) {
    this.#write = options.write;
    this.#useSpinner = options.spinner;
    this.#streaming = options.streaming;
    this.#checksOutput = options.checksOutput;
  }

  line(text = ''): void {
    this.#stopSpinner();
    this.#write(`${this.#prefix}${text}\n`);
  }

  /** Shows what `show` prints as the child turn of `callId` (agent `agent`): each line led by the agent path. */
  #inChild(callId: string, agent: string, show: () => void): void {
    this.#childAgents.set(callId, agent);
    const saved = this.#prefix;
    this.#prefix = `${saved}${pc.dim(`${safeText(agent)} │`)} `;
    try {
      show();
    } finally {
      this.#prefix = saved;
    }
  }

  /** A child turn's effect: its task, its end, or any effect as the turn's own would show. */
  #childEffect(effect: Extract<Effect, { type: 'child' }>): void {
    const inner = effect.effect;
    this.#inChild(effect.callId, effect.agent, () => {
      if (inner.type === 'append' && inner.message.role === 'user')
        this.line(`${pc.bold(pc.blue('task'))}   ${safeLines(inner.message.content)}`);
      else if (inner.type === 'done') {
        const o = inner.outcome;
        const how = o.status === 'stopped' ? pc.green(`✔ ${o.stopReason}`) : pc.red(`✖ ${o.status}`);
        this.line(`${pc.bold('end')}    ${how}`);
      } else this.onEffect(inner);
    });
  }

  /** A resumed turn continues the numbering of its model calls. */
  continueFrom(modelCalls: number): void {
    this.#modelCall = modelCalls;
  }

  header(file: string, modelLabel: string, toolCount: number): void {
    this.line(`${pc.bold('turnkit')} ${safeText(file)} ${pc.dim(`· ${modelLabel} · ${plural(toolCount, 'tool')}`)}`);
  }

  userInput(input: string): void {
    this.line(`${pc.bold(pc.blue('user'))}   ${safeLines(input)}`);
  }

  /** The decisions a resume gives; in a tree, each pending call's agents (`pending`'s `agentPath`) are named. */
  resumed(decisions: Readonly<Record<string, { type: string; reason?: string }>>, pending: readonly ParkedCall[] = []): void {
    for (const [id, decision] of Object.entries(decisions)) {
      const how =
        decision.type === 'approve'
          ? pc.green('approved')
          : pc.red(`rejected${decision.reason === undefined ? '' : ` (${safeText(decision.reason)})`}`);
      const path = pending.find((p) => p.call.id === id)?.agentPath;
      const whose = path === undefined ? '' : ` ${pc.dim(`· agent ${path.map((a) => safeText(a)).join(' › ')}`)}`;
      this.line(`${pc.yellow('resume')} ${safeText(id)} ${how}${whose}`);
    }
  }

  /** Tools whose execute is timed, so each result line can say how long the call took. */
  // any: each tool has its own input type.
  timed(tools: readonly ToolDefinition<any>[]): ToolDefinition<any>[] {
    return tools.map((tool) => ({
      ...tool,
      execute: async (input: unknown, ctx: { callId: string }) => {
        const started = performance.now();
        try {
          return await tool.execute(input, ctx as Parameters<typeof tool.execute>[1]);
        } finally {
          // Retries add up: the time is what the call cost in total.
          this.#toolMs.set(ctx.callId, (this.#toolMs.get(ctx.callId) ?? 0) + performance.now() - started);
        }
      },
    }));
  }

  /** For runTurn's `onStep`: events that close a model call or judge an output. */
  onStep = (record: TraceEntry): void => {
    this.#decided = new Set(Object.keys(record.state.batch?.decisions ?? {}));
    this.#event(record.event);
  };

  /** For runTurn's `onEffect`. */
  onEffect = (effect: Effect): void => {
    switch (effect.type) {
      case 'child':
        this.#childEffect(effect);
        return;
      case 'call_llm':
        this.#startModelCall(effect.request.final);
        return;
      case 'append':
        this.#message(effect.message);
        return;
      case 'emit':
        this.#notice(effect.notice.name, effect.notice.data);
        return;
      case 'dispatch_tools':
      case 'execute_approved':
        this.#dispatch(effect.calls, effect.type === 'execute_approved');
        return;
      case 'check_output':
        this.#startSpinner('checking the final answer');
        return;
      default:
        return;
    }
  };

  /** A `text_delta` of a streamed model call. */
  textDelta(text: string): void {
    if (!this.#streamedText) {
      this.#stopSpinner();
      this.#write(`${pc.dim('       ')}`);
      this.#streamedText = true;
    }
    this.#write(safeLines(text).replace(/\n/g, '\n       '));
  }

  outcome(result: TurnResult, elapsedMs: number): void {
    const usage = result.usage;
    const tokens =
      usage.totalTokens > 0 ? ` · ${usage.totalTokens} tokens (${usage.inputTokens} in, ${usage.outputTokens} out)` : '';
    const counts = `${plural(usage.modelCalls, 'model call')} · ${plural(usage.toolCalls, 'tool call')}${tokens} · ${duration(elapsedMs)}`;
    if (result.status === 'stopped') {
      // A text answer was shown as the model gave it; a parsed (structured) output is shown here.
      if (result.output !== null && result.output !== result.text) {
        this.line(pc.bold('answer'));
        this.line(
          indent(safeLines(typeof result.output === 'string' ? result.output : JSON.stringify(result.output, null, 2)), '  '),
        );
      }
      const reason = result.stopReason ?? 'completed';
      const colour = reason === 'completed' ? pc.green : pc.yellow;
      this.line(`${colour(pc.bold(`✔ stopped: ${reason}`))} ${pc.dim(`· ${counts}`)}`);
    } else if (result.status === 'failed') {
      this.line(
        `${pc.red(pc.bold(`✖ failed: ${safeText(result.error?.kind ?? 'error')}`))} ${safeText(result.error?.message ?? '')}`,
      );
      this.line(pc.dim(`  ${counts}`));
    } else if (result.status === 'cancelled') {
      this.line(`${pc.red(pc.bold('✖ cancelled'))} ${safeText(result.reason ?? '')}`);
      this.line(pc.dim(`  ${counts}`));
    } else {
      this.line(
        `${pc.yellow(pc.bold(`⏸ suspended: ${plural((result.pending ?? []).filter((p) => !Object.hasOwn(activeTurn(result.state).state.batch?.decisions ?? {}, p.call.id)).length, 'call')} waiting for approval`))} ${pc.dim(`· ${counts}`)}`,
      );
    }
  }

  stop(): void {
    this.#stopSpinner();
  }

  #startModelCall(final: boolean): void {
    this.#modelCall += 1;
    this.#callStarted = performance.now();
    this.#final = final;
    this.#streamedText = false;
    const label = `call ${this.#modelCall}${final ? ' (final answer, tools off)' : ''}`;
    if (this.#streaming) this.line(`${pc.bold(pc.magenta('model'))}  ${label}`);
    this.#startSpinner(`${label}: waiting for the model`);
  }

  #event(event: TurnEvent): void {
    switch (event.type) {
      case 'child': {
        const inner = event.event;
        this.#inChild(event.callId, this.#childAgents.get(event.callId) ?? 'agent', () => this.#event(inner));
        return;
      }
      case 'model_responded': {
        const took = duration(performance.now() - this.#callStarted);
        const calls = event.response.toolCalls.length;
        const u = event.response.usage;
        const tokens =
          u?.inputTokens !== undefined || u?.outputTokens !== undefined
            ? ` · ${u.inputTokens ?? 0} in / ${u.outputTokens ?? 0} out tokens`
            : '';
        const what = calls > 0 ? plural(calls, 'tool call') : 'answer';
        if (this.#streamedText) this.#write('\n');
        if (this.#streaming) this.line(pc.dim(`       ${what}${tokens} · ${took}`));
        else
          this.line(
            `${pc.bold(pc.magenta('model'))}  call ${this.#modelCall}${this.#final ? ' (final answer, tools off)' : ''} · ${what}${pc.dim(`${tokens} · ${took}`)}`,
          );
        return;
      }
      case 'model_failed':
        if (this.#streamedText) this.#write('\n');
        this.line(
          `${pc.bold(pc.magenta('model'))}  ${pc.red(`call ${this.#modelCall} failed: ${safeText(event.error.message)}`)}`,
        );
        return;
      case 'output_accepted':
        if (this.#checksOutput) this.line(`${pc.green('check')}  the final answer matches the output schema`);
        return;
      case 'output_rejected':
        this.line(`${pc.yellow('check')}  ${pc.yellow('rejected, asking the model to repair it:')} ${safeText(event.reason)}`);
        return;
      case 'tools_completed':
      case 'approved_tools_completed':
      case 'tools_parked':
        this.#stopSpinner();
        return;
      default:
        return;
    }
  }

  #message(message: Message): void {
    switch (message.role) {
      case 'assistant':
        if (message.content.length > 0 && !this.#streaming) this.line(indent(pc.italic(safeLines(message.content)), '       '));
        return;
      case 'tool':
        this.#result(message.result);
        return;
      case 'user':
        // The first user message is printed by `userInput`; later ones are repair requests.
        return;
      case 'system':
        return;
    }
  }

  #dispatch(calls: readonly ToolCall[], approved: boolean): void {
    const verb = approved ? 'approved' : 'call';
    for (const c of calls)
      this.line(
        `${pc.bold(pc.cyan('tool'))}   ${pc.dim('→')} ${pc.cyan(safeText(c.name))} ${pc.dim(safeText(c.id))} ${preview(c.input, 100)}${approved ? pc.green(` (${verb})`) : ''}`,
      );
    if (calls.length > 1) this.line(pc.dim(`       ${calls.length} calls run in parallel`));
    this.#startSpinner(`running ${plural(calls.length, 'tool')}`);
  }

  #result(result: ToolResult): void {
    const ms = this.#toolMs.get(result.callId);
    const took = ms === undefined ? '' : pc.dim(` · ${duration(ms)}`);
    const mark = result.isError ? pc.red('✗') : pc.green('✓');
    const output = preview(result.output, 110);
    this.line(
      `${pc.bold(pc.cyan('tool'))}   ${mark} ${pc.cyan(safeText(result.name))} ${pc.dim(safeText(result.callId))}${took} ${pc.dim('→')} ${result.isError ? pc.red(output) : output}`,
    );
  }

  #notice(name: string, data: unknown): void {
    const d = (data ?? {}) as Record<string, unknown>;
    switch (name) {
      case 'limit_reached':
        this.line(`${pc.yellow('limit')}  ${pc.yellow(limitText(d))}`);
        return;
      case 'awaiting_approval': {
        const pending = (Array.isArray(d.pending) ? d.pending : []) as ParkedCall[];
        for (const p of pending.filter((parked) => !this.#decided.has(parked.call.id))) {
          this.line(
            `${pc.yellow('ask')}    ${pc.yellow('⏸')} ${pc.cyan(safeText(p.call.name))} ${pc.dim(safeText(p.call.id))} ${preview(p.input ?? p.call.input, 100)} ${pc.yellow(`waits for approval${p.reason === undefined ? '' : ` (${safeText(p.reason)})`}`)}`,
          );
        }
        return;
      }
      case 'ignored_event':
        this.line(pc.dim(`note   ignored: ${typeof d.reason === 'string' ? safeText(d.reason) : preview(d)}`));
        return;
      case 'hook_blocked': {
        const why = typeof d.reason === 'string' ? `: ${preview(d.reason, 100)}` : '';
        this.line(
          `${pc.yellow('hook')}   ${pc.yellow('✗')} ${pc.cyan(safeText(String(d.tool)))} ${pc.dim(safeText(String(d.callId)))} ${pc.yellow(`blocked by hook '${safeText(String(d.hook))}'${why}`)}`,
        );
        return;
      }
      default:
        // turn_started, iteration and steering are visible from the model and tool lines already.
        return;
    }
  }

  #startSpinner(text: string): void {
    if (!this.#useSpinner) return;
    this.#stopSpinner();
    this.#spinner = yoctoSpinner({ text, stream: process.stderr, handleSignals: false }).start();
  }

  #stopSpinner(): void {
    if (this.#spinner === null) return;
    this.#spinner.stop();
    this.#spinner = null;
  }
}

function limitText(d: Record<string, unknown>): string {
  if (d.limit === 'max_iterations')
    return `max iterations reached after ${typeof d.round === 'number' ? plural(d.round, 'tool round') : 'the last tool round'}: asking for a final answer with tools off`;
  if (d.limit === 'loop_detected')
    return `loop detected (${safeText(String(d.repeats))} identical tool batches in a row): asking for a final answer with tools off`;
  return `limit reached: ${preview(d)}`;
}

// Small pieces of the console's pages: status badges, ages, JSON blocks, timeline items and the
// transcript. Everything from a turn goes through `html`, which escapes it.

import type { Message, Notice, Outcome } from '@turnkit/core';
import type { StoredStatus, WatchEvent } from '@turnkit/store';
import { type Html, html } from '../html.js';

const RUNNING = new Set<string>(['ready', 'calling_model', 'dispatching', 'executing_approved', 'steering', 'finalizing']);

/** The badge of a status; a turn waiting for a person gets the one that stands out. */
export function statusBadge(status: StoredStatus): Html {
  const kind = status === 'awaiting_approval' ? 'waiting' : RUNNING.has(status) ? 'running' : status;
  const label = status === 'awaiting_approval' ? 'waiting for you' : status.replace(/_/g, ' ');
  return html`<span class="badge badge-${kind}" data-status="${status}">${label}</span>`;
}

/** A coarse age ("just now", "4 min", "2 h", "3 d"), so a live list re-renders at most once a minute per row. */
export function age(iso: string, now: number): string {
  const seconds = Math.max(0, (now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds) || seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/** Pretty JSON in a <pre> (a string is shown as the JSON string it is, quotes included). */
export function jsonBlock(value: unknown, label?: string): Html {
  return html`<pre class="json"${label ? html` aria-label="${label}"` : ''}>${JSON.stringify(value, null, 2) ?? 'undefined'}</pre>`;
}

function messageItem(message: Message): Html {
  switch (message.role) {
    case 'system':
      return html`<span class="kind">system prompt</span><p class="text">${message.content}</p>`;
    case 'user':
      return html`<span class="kind">input</span><p class="text">${message.content}</p>`;
    case 'assistant':
      return html`<span class="kind">model reply</span>${message.content === '' ? '' : html`<p class="text">${message.content}</p>`}${message.toolCalls.map(
        (call) =>
          html`<div class="call"><span class="tool">${call.name}</span> <code>${call.id}</code>${jsonBlock(call.input, 'input')}</div>`,
      )}`;
    case 'tool': {
      const { result } = message;
      return html`<span class="kind ${result.isError ? 'kind-error' : ''}">tool result</span> <span class="tool">${result.name}</span> <code>${result.callId}</code> <span class="${result.isError ? 'err' : 'ok'}">${result.isError ? 'error' : 'ok'}</span>${jsonBlock(result.output, 'output')}`;
    }
  }
}

const NOTICE_LABELS: Record<string, string> = {
  turn_started: 'turn started',
  iteration: 'tool round',
  steering: 'steering',
  awaiting_approval: 'waiting for a person',
  limit_reached: 'limit reached',
  ignored_event: 'ignored event',
  model_retry: 'model call retried',
};

function noticeItem(notice: Notice): Html {
  const label = NOTICE_LABELS[notice.name] ?? notice.name;
  const data = notice.data === null ? '' : JSON.stringify(notice.data);
  const shown = data.length > 160 ? `${data.slice(0, 159)}…` : data;
  return html`<span class="kind kind-notice">${label}</span>${shown === '' ? '' : html`<code class="data" title="${data}">${shown}</code>`}`;
}

/** A one-line summary of an outcome. */
export function outcomeText(outcome: Outcome | null): string {
  if (outcome === null) return '';
  if (outcome.status === 'stopped')
    return `${outcome.stopReason}: ${typeof outcome.output === 'string' ? outcome.output : JSON.stringify(outcome.output)}`;
  if (outcome.status === 'failed') return `${outcome.error.kind}: ${outcome.error.message}`;
  return outcome.reason;
}

/** One timeline entry (an <li>), numbered by the event's seq. */
export function timelineItem(event: WatchEvent): Html {
  const body =
    event.type === 'message'
      ? messageItem(event.message)
      : event.type === 'notice'
        ? noticeItem(event.notice)
        : html`<span class="kind kind-status">status</span> ${statusBadge(event.status)}${event.outcome ? html` <span class="outcome">${outcomeText(event.outcome)}</span>` : ''}`;
  // A child turn's event says whose it is (the path of agents) and is indented under its parent's.
  const child = event.type === 'status' ? undefined : event.child;
  if (child !== undefined)
    return html`<li class="event event-${event.type} event-child" data-seq="${event.seq}" data-turn="${child.turn}"><span class="seq">${event.seq}</span><div><span class="agent">${child.agentPath.join(' › ')}</span> ${body}</div></li>`;
  return html`<li class="event event-${event.type}" data-seq="${event.seq}"><span class="seq">${event.seq}</span><div>${body}</div></li>`;
}

/** One message of the conversation as a chat bubble (an <li>). */
export function transcriptItem(message: Message): Html {
  if (message.role === 'tool') {
    const { result } = message;
    const output = typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
    return html`<li class="msg msg-tool"><span class="who">${result.name} ${result.isError ? 'error' : 'result'}</span><p>${output}</p></li>`;
  }
  const calls =
    message.role === 'assistant'
      ? message.toolCalls.map((c) => html`<code class="chip">${c.name}(${JSON.stringify(c.input)})</code>`)
      : [];
  return html`<li class="msg msg-${message.role}"><span class="who">${message.role === 'assistant' ? 'model' : message.role}</span>${message.content === '' ? '' : html`<p>${message.content}</p>`}${calls}</li>`;
}

/**
 * The conversation as chat bubbles. With no message yet, what the status says: a `ready` turn is
 * not taken yet; one that ended (a worker failed it: no agent of that name, a state it cannot read)
 * ended before its first message; one running has not written it yet.
 */
export function transcriptView(transcript: readonly Message[], status: StoredStatus): Html {
  if (transcript.length === 0)
    return html`<p class="empty">${
      status === 'ready'
        ? 'Nothing yet: a worker has not taken this turn.'
        : status === 'failed' || status === 'cancelled' || status === 'stopped'
          ? `No messages: the turn ended (${status}) before its first one; its outcome says why.`
          : 'Nothing yet: the worker that holds this turn has not written its first message.'
    }</p>`;
  return html`<ol class="transcript">${transcript.map(transcriptItem)}</ol>`;
}

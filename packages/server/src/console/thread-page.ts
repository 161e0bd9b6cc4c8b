// The console's threads: their list, and a thread's page with its turns in order, the calls its
// current turn has parked (each decided on that turn's page), and its transcript (what its next
// model request starts from). The page's parts are "panels" (`data-panel`), each a function of the
// stored thread, which its live stream re-renders.

import type { StoredThread, ThreadSummary } from '@turnkit/store';
import { type Html, html, raw } from '../html.js';
import { listRows } from './pages.js';
import { age, transcriptView } from './parts.js';
import { parkedCall } from './turn-page.js';

const threadLink = (id: string): Html => html`<a href="/console/threads/${encodeURIComponent(id)}">${id}</a>`;

/** The list of threads (one page, by id). */
export function threadsBody(threads: readonly ThreadSummary[], next: string | null, now: number): Html {
  const rows =
    threads.length === 0
      ? html`<tr><td colspan="5" class="empty">No threads yet: submit a turn with a thread.</td></tr>`
      : html`${threads.map(
          (
            t,
          ) => html`<tr data-thread="${t.id}"><td class="id">${threadLink(t.id)}</td><td class="agent" data-label="Agent">${t.agent}</td>
<td data-label="Turns">${String(t.turns)}</td><td data-label="Status">${t.status}${t.current === null ? '' : html` · current <a href="/console/turns/${encodeURIComponent(t.current)}">${t.current}</a>`}</td>
<td class="age" data-label="Age"><time datetime="${t.createdAt}">${age(t.createdAt, now)}</time></td></tr>`,
        )}`;
  return html`<h1>Threads</h1><p><a href="/console">All turns</a></p>
<table class="turns"><caption class="sr-only">Threads, by id</caption><thead><tr><th scope="col">Thread</th><th scope="col">Agent</th><th scope="col">Turns</th><th scope="col">Status</th><th scope="col">Age</th></tr></thead>
<tbody>${rows}</tbody></table>
<p class="pager">${next !== null ? html`<a href="/console/threads?cursor=${encodeURIComponent(next)}">Next page</a>` : ''}</p>`;
}

/** The panels of a thread's page, by name: the live stream sends each again when it changed. */
export function threadPanels(thread: StoredThread, now: number): Record<string, string> {
  const current = thread.current;
  const parked =
    current === null || thread.parked.length === 0
      ? html`<p class="empty">Nothing is waiting for a person.</p>`
      : html`${thread.parked.map((p) => html`<div class="parked">${parkedCall(p)}</div>`)}
<p><a class="primary" href="/console/turns/${encodeURIComponent(current)}">Decide on turn ${current}</a></p>`;
  return {
    summary:
      html`Agent ${thread.agent} · ${thread.status}${thread.closeReason === null ? '' : html`: <q>${thread.closeReason}</q>`}`
        .value,
    parked: parked.value,
    turns: listRows(thread.turns, now, new Map()).value,
    transcript: (thread.transcript.length === 0
      ? html`<p class="empty">No messages yet: a worker has not taken the thread's first turn.</p>`
      : transcriptView(thread.transcript, 'stopped')
    ).value,
  };
}

/** A thread's page (live when served with its stream). */
export function threadBody(thread: StoredThread, now: number): Html {
  const panels = threadPanels(thread, now);
  const panel = (name: string) => raw(panels[name] ?? '');
  return html`<h1>Thread ${thread.id}</h1>
<p class="muted"><span data-panel="summary" aria-live="polite">${panel('summary')}</span> · <a href="/console/threads">All threads</a></p>
<section class="card" aria-labelledby="parked-h"><h2 id="parked-h">Waiting for you</h2><div data-panel="parked">${panel('parked')}</div></section>
<section class="card" aria-labelledby="turns-h"><h2 id="turns-h">Turns, in order</h2>
<table class="turns"><thead><tr><th scope="col">Turn</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Age</th></tr></thead>
<tbody data-panel="turns">${panel('turns')}</tbody></table></section>
<section class="card" aria-labelledby="transcript-h"><h2 id="transcript-h">Transcript</h2><div data-panel="transcript">${panel('transcript')}</div></section>`;
}

// The console's page frame, the login page and the list of turns.

import type { ParkedCall } from '@turnkit/core';
import type { StoredStatus, TurnSummary } from '@turnkit/store';
import { type Html, html } from '../html.js';
import { age, statusBadge } from './parts.js';

export interface Frame {
  readonly title: string;
  /** The session's CSRF token (absent on the login page). */
  readonly csrf?: string;
  /** Turns waiting for a person, for the header's badge. */
  readonly waiting?: number;
  /** The SSE stream the page listens to. */
  readonly stream?: string;
}

/** The most waiting turns counted for the header (one page of `store.list`). */
export const WAITING_CAP = 1000;

/** The waiting count in the header (re-rendered by the live stream). */
export function waitingBadge(waiting: number): Html {
  return waiting === 0
    ? html`<a class="waiting waiting-none" href="/console?status=awaiting_approval">none waiting</a>`
    : html`<a class="waiting" href="/console?status=awaiting_approval">${waiting >= WAITING_CAP ? `${WAITING_CAP}+` : waiting} waiting for you</a>`;
}

export function page(frame: Frame, body: Html): string {
  const nav =
    frame.csrf === undefined
      ? ''
      : html`<nav aria-label="Console"><span data-panel="waiting">${waitingBadge(frame.waiting ?? 0)}</span>
      <form method="post" action="/console/logout"><input type="hidden" name="csrf" value="${frame.csrf}"><button class="link">Sign out</button></form></nav>`;
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · turnkit</title><link rel="icon" href="/console/assets/icon.svg"><link rel="stylesheet" href="/console/assets/console.css"><script type="module" src="/console/assets/console.js"></script></head>
<body${frame.stream ? html` data-stream="${frame.stream}"` : ''}><a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/console">turnkit <span>console</span></a>${nav}</header>
<main id="main" tabindex="-1">${body}</main></body></html>`}`;
}

export function loginPage(error: string | null): string {
  return page(
    { title: 'Sign in' },
    html`<section class="card login"><h1>Sign in</h1>
<p>Paste the server's token: <code>turnkit serve</code> printed it on its first start, or it is the value of <code>TURNKIT_SERVER_TOKEN</code>.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/console/login"><label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="off" required autofocus>
<button class="primary">Sign in</button></form></section>`,
  );
}

export const FILTERS: readonly { readonly label: string; readonly status?: StoredStatus }[] = [
  { label: 'All' },
  { label: 'Waiting for you', status: 'awaiting_approval' },
  { label: 'Ready', status: 'ready' },
  { label: 'Stopped', status: 'stopped' },
  { label: 'Failed', status: 'failed' },
  { label: 'Cancelled', status: 'cancelled' },
];

/** What a row shows besides the summary: the turn's input and, while it waits, what it asks a person to run. */
export interface RowDetail {
  readonly input: string | null;
  readonly asks: readonly ParkedCall[];
}

/** At most `max` characters of `text`, cut with an ellipsis (the turn's page shows it whole). */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The rows of the list (re-rendered by the live stream). */
export function listRows(turns: readonly TurnSummary[], now: number, details: ReadonlyMap<string, RowDetail>): Html {
  if (turns.length === 0) return html`<tr><td colspan="4" class="empty">No turns here yet.</td></tr>`;
  return html`${turns.map((t) => {
    const detail = details.get(t.id);
    const input = detail?.input ?? '';
    const asks = t.status === 'awaiting_approval' ? (detail?.asks ?? []) : [];
    const asked = asks.map(
      (p) =>
        html`<p class="row-asks">asks to run <code>${p.call.name}</code> <code>${clip(JSON.stringify(p.input === undefined ? p.call.input : p.input) ?? '', 100)}</code></p>`,
    );
    return html`<tr class="${t.status === 'awaiting_approval' ? 'row-waiting' : ''}" data-turn="${t.id}">
<td class="id"><a href="/console/turns/${encodeURIComponent(t.id)}">${t.id}</a>${input === '' ? '' : html`<p class="row-input" title="${clip(input, 2000)}">${clip(input, 140)}</p>`}${asked}</td><td class="agent" data-label="Agent">${t.agent}${t.thread === null ? '' : html` · thread <a href="/console/threads/${encodeURIComponent(t.thread)}">${t.thread}</a>`}</td>
<td class="status">${statusBadge(t.status)}</td><td class="age" data-label="Age"><time datetime="${t.createdAt}">${age(t.createdAt, now)}</time></td></tr>`;
  })}`;
}

export interface ListView {
  readonly turns: readonly TurnSummary[];
  readonly details: ReadonlyMap<string, RowDetail>;
  readonly status: StoredStatus | undefined;
  readonly cursor: string | undefined;
  readonly next: string | null;
  readonly now: number;
}

export function listBody(view: ListView): Html {
  const query = (extra: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ status: view.status, ...extra })) if (v !== undefined) params.set(k, v);
    const text = params.toString();
    return text === '' ? '/console' : `/console?${text}`;
  };
  return html`<h1>Turns</h1><p><a href="/console/threads">Threads</a></p>
<nav class="filters" aria-label="Filter by status">${FILTERS.map(
    (f) =>
      html`<a href="${query({ status: f.status, cursor: undefined })}"${f.status === view.status ? html` aria-current="page"` : ''}>${f.label}</a>`,
  )}</nav>
<table class="turns"><caption class="sr-only">Turns, oldest first</caption><thead><tr><th scope="col">Turn</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Age</th></tr></thead>
<tbody data-panel="rows">${listRows(view.turns, view.now, view.details)}</tbody></table>
<p class="pager">${view.cursor !== undefined ? html`<a href="${query({ cursor: undefined })}">First page</a>` : ''}${view.next !== null ? html`<a href="${query({ cursor: view.next })}">Next page</a>` : ''}</p>`;
}

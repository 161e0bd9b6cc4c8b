// A turn's page: header, the calls waiting for a person, the live timeline, budgets spent, the
// machine's diagram with the current state highlighted, and the transcript. The parts the live
// stream re-renders are "panels" (`data-panel`), each a function of the stored turn; the timeline
// and the transcript grow by the entries the stream appends.

import type { ParkedCall, TurnState } from '@turnkit/core';
import type { InboxEntry, StoredTurn } from '@turnkit/store';

type JournalEntry = StoredTurn['toolCalls'][number];
import { type Html, html, raw } from '../html.js';
import { TERMINAL } from '../schemas.js';
import { diagramState, turnDiagram } from './diagram.js';
import { jsonBlock, outcomeText, statusBadge, transcriptView } from './parts.js';

const decisionLine = (entry: InboxEntry): Html => {
  if (entry.kind === 'decision' && entry.decision === null)
    return html`<li class="error"><code>${entry.callId}</code>: this decision cannot be read, so it was not applied; the call still waits. <span class="muted">${entry.status}</span></li>`;
  const what =
    entry.kind === 'cancel'
      ? html`cancel${entry.reason ? html`: <q>${entry.reason}</q>` : ''}`
      : entry.decision?.type === 'approve'
        ? html`<code>${entry.callId}</code> approved${entry.decision.remember ? html` (always, for this ${entry.decision.remember})` : ''}`
        : html`<code>${entry.callId}</code> rejected${entry.decision?.type === 'reject' && entry.decision.reason ? html`: <q>${entry.decision.reason}</q>` : ''}`;
  return html`<li>${what} <span class="muted">${entry.status}</span></li>`;
};

/** The input that runs if the call is approved: what the before-hooks left, else the model's own. */
export const inputThatRuns = (p: ParkedCall): unknown => (p.input === undefined ? p.call.input : p.input);

/** The path of agents whose call it is, in a turn of many agents (a child turn's call: `supervisor › researcher`). */
const agentPathLine = (p: ParkedCall): Html | string =>
  p.agentPath === undefined ? '' : html`<p class="agent-path">agent <strong>${p.agentPath.join(' › ')}</strong></p>`;

/** One parked call: its name, id, whose call it is, why it waits and exactly the input that will run. */
export function parkedCall(p: ParkedCall): Html {
  return html`<h3><span class="tool">${p.call.name}</span> <code>${p.call.id}</code></h3>${agentPathLine(p)}${p.reason ? html`<p class="muted">${p.reason}</p>` : ''}${deadline(p)}
<p class="label">This input will run:</p>${jsonBlock(inputThatRuns(p), `input of ${p.call.id}`)}`;
}

/** When the approval expires (the call is then rejected as expired), if it does. */
function deadline(p: ParkedCall): Html | string {
  if (p.expiresAt === undefined) return '';
  const at = new Date(p.expiresAt).toISOString();
  return html`<p class="muted deadline">Decide by <time datetime="${at}">${at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>; then it is rejected as expired.</p>`;
}

/** The calls waiting for a person, each with exactly the input that will run and the three decisions. */
export function parkedPanel(turn: StoredTurn, csrf: string): Html {
  const forms = turn.parked.map(
    (
      p,
    ) => html`<form class="parked" method="post" action="/console/turns/${encodeURIComponent(turn.id)}/decide" data-call="${p.call.id}">
${parkedCall(p)}
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="call" value="${p.call.id}">
<div class="actions"><button class="primary" name="action" value="approve">Approve</button><button name="action" value="approve_always" title="Approve, and approve later calls of ${p.call.name} without asking">Approve always</button>
<button class="danger" name="action" value="reject" title="Reject: the next step asks for the reason the model reads">Reject</button></div></form>`,
  );
  const decided =
    turn.decisions.length === 0
      ? ''
      : html`<h3 class="sub">Decisions</h3><ul class="decisions">${turn.decisions.map(decisionLine)}</ul>`;
  const none = turn.parked.length === 0 ? html`<p class="empty">Nothing is waiting for a person.</p>` : '';
  return html`${none}${forms}${decided}`;
}

/** Reject's second step: the reason the model reads (required), then Reject, or back to the turn. */
export function rejectPage(turnId: string, p: ParkedCall, csrf: string, error: string | null): Html {
  const back = `/console/turns/${encodeURIComponent(turnId)}`;
  return html`<p class="crumbs"><a href="/console">Turns</a> › <a href="${back}"><code>${turnId}</code></a></p>
<section class="card reject-step"><h1>Reject <code>${p.call.id}</code>?</h1>${parkedCall(p)}
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="${back}/decide"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="call" value="${p.call.id}"><input type="hidden" name="action" value="reject">
<label for="reason">Why reject it? The model reads this reason.</label>
<input id="reason" name="reason" required maxlength="2000" autocomplete="off" autofocus>
<div class="actions"><button class="danger">Reject</button><a href="${back}">Back to the turn</a></div></form></section>`;
}

/** One journaled call as the tree lists it: its tool, id and how it ended (or that it runs). */
const treeCall = (c: JournalEntry): Html =>
  html`<li><span class="tool">${c.name}</span> <code>${c.callId}</code> <span class="${c.result === null ? 'muted' : c.result.isError ? 'err' : 'ok'}">${c.result === null ? 'running' : c.result.isError ? 'error' : 'ok'}</span></li>`;

/**
 * A turn of many agents: which agent ran which calls. The turn's own agent with its calls, then each
 * child turn (`transfer_task`) under its path of agents, with its calls. Empty for a turn of one agent.
 */
export function agentsPanel(turn: StoredTurn): Html | string {
  const children = turn.children ?? [];
  if (children.length === 0) return '';
  const own = turn.toolCalls.filter((c) => c.turn === undefined);
  const rows = children.map((child) => {
    const calls = turn.toolCalls.filter((c) => c.turn === child.id);
    return html`<li class="child" data-turn="${child.id}"><span class="agent">${child.agentPath.join(' › ')}</span> <code class="muted">${child.id.slice(turn.id.length)}</code>
${calls.length === 0 ? html`<p class="muted">No tool calls.</p>` : html`<ul class="calls">${calls.map(treeCall)}</ul>`}</li>`;
  });
  return html`<ul class="tree"><li class="root"><span class="agent">${turn.state?.agents?.agent ?? turn.agent}</span>
${own.length === 0 ? '' : html`<ul class="calls">${own.map(treeCall)}</ul>`}<ul class="children">${rows}</ul></li></ul>`;
}

const number = (n: number, cost: boolean): string => (cost ? `$${n.toFixed(4)}` : n.toLocaleString('en-US'));

/** Usage against the turn's budget: spent, the limit (or "no limit") and a bar. */
export function budgetsPanel(state: TurnState | null): Html {
  if (state === null) return html`<p class="empty">Nothing spent yet.</p>`;
  const { usage, limits } = state;
  const rows: [string, number, number | undefined, boolean][] = [
    ['model calls', usage.modelCalls, limits.budget.maxModelCalls, false],
    ['tool calls', usage.toolCalls, limits.budget.maxToolCalls, false],
    ['input tokens', usage.inputTokens, limits.budget.maxInputTokens, false],
    ['output tokens', usage.outputTokens, limits.budget.maxOutputTokens, false],
    ['total tokens', usage.totalTokens, limits.budget.maxTotalTokens, false],
    ['cost', usage.cost, limits.budget.maxCost, true],
    ['tool rounds', state.round, limits.maxIterations, false],
  ];
  return html`<table class="budgets"><tbody>${rows.map(([name, spent, max, cost]) => {
    const pct = max === undefined || max <= 0 ? null : Math.min(100, Math.round((spent / max) * 100));
    return html`<tr><th scope="row">${name}</th><td class="num">${number(spent, cost)}</td><td class="num muted">${max === undefined ? 'no limit' : `of ${number(max, cost)}`}</td>
<td class="bar">${pct === null ? '' : html`<meter min="0" max="100" value="${pct}" aria-label="${name}: ${pct}% of the limit"></meter>`}</td></tr>`;
  })}</tbody></table>`;
}

export function summaryPanel(turn: StoredTurn): Html {
  const ended = turn.outcome ?? (turn.error ? { status: 'failed' as const, error: turn.error } : null);
  return html`${statusBadge(turn.status)}<span class="outcome">${outcomeText(ended)}</span>`;
}

/**
 * The small panels the live stream re-renders, by name (each sent only when it changed). The
 * transcript is not one: the stream appends its new messages.
 */
export function turnPanels(turn: StoredTurn, csrf: string): Record<string, string> {
  return {
    summary: summaryPanel(turn).value,
    parked: parkedPanel(turn, csrf).value,
    budgets: budgetsPanel(turn.state).value,
    cancel: cancelForm(turn, csrf).value,
    agents: html`${agentsPanel(turn)}`.value,
  };
}

function cancelForm(turn: StoredTurn, csrf: string): Html {
  if (TERMINAL.has(turn.status)) return html``;
  return html`<form method="post" action="/console/turns/${encodeURIComponent(turn.id)}/cancel" class="cancel"><input type="hidden" name="csrf" value="${csrf}">
<label for="cancel-reason" class="sr-only">Reason for cancelling</label><input id="cancel-reason" name="reason" placeholder="Why cancel?" maxlength="2000"><button class="danger">Cancel turn</button></form>`;
}

export function turnBody(turn: StoredTurn, csrf: string): Html {
  const panels = turnPanels(turn, csrf);
  const panel = (name: string) => raw(panels[name] ?? '');
  const diagram = turnDiagram();
  return html`<p class="crumbs"><a href="/console">Turns</a></p>
<header class="turn-head"><div><h1><code>${turn.id}</code></h1><p class="muted">agent <strong>${turn.agent}</strong> · created <time datetime="${turn.createdAt}">${turn.createdAt.replace('T', ' ').slice(0, 19)}</time></p></div>
<p class="summary" data-panel="summary" aria-live="polite">${panel('summary')}</p></header>
${turn.input === null ? '' : html`<p class="input"><span class="label">Input</span> ${turn.input}</p>`}
<div class="grid">
<section class="card span" aria-labelledby="h-parked"><h2 id="h-parked">Waiting for a person</h2><div data-panel="parked">${panel('parked')}</div></section>
<section class="card" aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline</h2><ol id="timeline" class="timeline scroll" tabindex="0" aria-label="Timeline, live" aria-live="polite"></ol>
<noscript><p class="muted">The live timeline needs JavaScript; the transcript is complete.</p></noscript></section>
<div class="stack"><section class="card" aria-labelledby="h-budgets"><h2 id="h-budgets">Budget spent</h2><div data-panel="budgets">${panel('budgets')}</div></section>
<section class="card" aria-labelledby="h-transcript"><h2 id="h-transcript">Transcript</h2><div class="scroll transcript-box" tabindex="0" data-panel="transcript" data-count="${turn.transcript.length}">${transcriptView(turn.transcript, turn.status)}</div></section></div>
${turn.children === undefined ? '' : html`<section class="card span" aria-labelledby="h-agents"><h2 id="h-agents">Agents <span class="muted">(which agent ran which calls)</span></h2><div data-panel="agents">${panel('agents')}</div></section>`}
<section class="card span" aria-labelledby="h-machine"><h2 id="h-machine">Turn machine <span class="muted">(the current state is highlighted)</span></h2><div class="diagram scroll" tabindex="0" aria-labelledby="h-machine" data-current="${diagramState(turn.state, turn.status)}">${raw(diagram.svg)}</div></section>
<section class="card span" aria-label="Cancel"><div data-panel="cancel">${panel('cancel')}</div></section>
</div>`;
}

// The console's stylesheet and its one script, served from /console/assets/ (the page's CSP allows
// scripts and styles from this server only: no inline code, no CDN, no network).

export const CONSOLE_CSS = `
:root { --bg: #f6f7f9; --card: #fff; --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; --accent: #4338ca; --accent-bg: #eef2ff;
  --hl: #4338ca; --hl-fill: #e0e7ff; --warn: #b45309; --warn-bg: #fef3c7; --ok: #047857; --ok-bg: #d1fae5; --bad: #b91c1c; --bad-bg: #fee2e2;
  color-scheme: light; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); overflow-wrap: anywhere; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; border-radius: 4px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; z-index: 2; }
.skip:focus { left: .5rem; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.top { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: .75rem 1.25rem; background: #111827; color: #f9fafb; min-height: 3.25rem; flex-wrap: wrap; }
.top nav { display: flex; align-items: center; gap: 1rem; }
.top form { margin: 0; }
.brand { color: #fff; font-weight: 700; text-decoration: none; letter-spacing: .02em; }
.brand span { font-weight: 400; color: #9ca3af; }
.waiting { display: inline-block; min-width: 9.5rem; text-align: center; padding: .15rem .6rem; border-radius: 999px; background: var(--warn-bg); color: var(--warn); font-weight: 600; text-decoration: none; font-variant-numeric: tabular-nums; }
.waiting-none { background: #374151; color: #d1d5db; font-weight: 400; }
button.link { background: none; border: 0; color: #d1d5db; text-decoration: underline; padding: 0; min-height: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1.25rem; }
main:focus { outline: none; }
h1 { font-size: 1.4rem; margin: 0 0 .75rem; }
h2 { font-size: 1rem; margin: 0 0 .75rem; }
h2:not(:first-child) { margin-top: 1.25rem; }
h3 { font-size: .95rem; margin: 0 0 .4rem; }
h3.sub { margin-top: 1rem; color: var(--muted); }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.json { background: #f3f4f6; border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin: .35rem 0; overflow-x: auto; white-space: pre-wrap; word-break: break-word; max-height: 16rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.1rem; min-width: 0; }
.muted, .empty { color: var(--muted); }
.empty { margin: 0; }
.error { color: var(--bad); background: var(--bad-bg); padding: .5rem .75rem; border-radius: 6px; }
button, input { font: inherit; min-height: 2.5rem; border-radius: 6px; }
button { white-space: nowrap; border: 1px solid #d1d5db; background: #fff; color: var(--fg); padding: .35rem .9rem; cursor: pointer; font-weight: 600; }
button:hover { background: #f3f4f6; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover { background: #3730a3; }
button.danger { color: var(--bad); border-color: #fca5a5; }
input { border: 1px solid #d1d5db; padding: .35rem .6rem; min-width: 0; }
.badge { display: inline-block; min-width: 8.5rem; text-align: center; padding: .1rem .6rem; border-radius: 999px; font-size: .85rem; font-weight: 600; white-space: nowrap; }
.badge-running { background: var(--accent-bg); color: var(--accent); }
.badge-waiting { background: var(--warn-bg); color: var(--warn); }
.badge-stopped { background: var(--ok-bg); color: var(--ok); }
.badge-failed { background: var(--bad-bg); color: var(--bad); }
.badge-cancelled { background: #e5e7eb; color: #374151; }
.filters { display: flex; flex-wrap: wrap; gap: .4rem; margin-bottom: 1rem; }
.filters a { padding: .3rem .75rem; border-radius: 999px; border: 1px solid var(--line); background: var(--card); text-decoration: none; color: var(--fg); }
.filters a[aria-current] { background: var(--fg); color: #fff; border-color: var(--fg); }
table.turns { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; table-layout: fixed; }
.turns th, .turns td { text-align: left; padding: .6rem .9rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
.turns th { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); background: #f9fafb; }
.turns th:nth-child(1) { width: 42%; } .turns th:nth-child(3) { width: 11rem; } .turns th:nth-child(4) { width: 7rem; }
.turns td.id a { font: 13px ui-monospace, monospace; word-break: break-all; }
.row-waiting { background: #fffbeb; }
.row-waiting td:first-child { box-shadow: inset 4px 0 0 #f59e0b; }
.pager { display: flex; gap: 1rem; }
.login { max-width: 28rem; margin: 3rem auto; }
.login form { display: grid; gap: .5rem; }
.crumbs { margin: 0 0 .5rem; }
.turn-head { display: flex; justify-content: space-between; align-items: flex-start; gap: 1rem; flex-wrap: wrap; }
.turn-head h1 code { font-size: 1.1rem; }
.turn-head p { margin: 0; }
.summary { display: flex; flex-direction: column; align-items: flex-end; gap: .25rem; min-height: 3.2rem; max-width: 26rem; }
.summary .outcome { color: var(--muted); font-size: .9rem; text-align: right; }
.input { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .6rem 1rem; }
.label { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: .25rem 0; }
.grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; margin-top: 1rem; }
.span { grid-column: 1 / -1; }
.scroll { overflow: auto; overscroll-behavior: contain; }
.timeline { list-style: none; margin: 0; padding: 0; height: 30rem; contain: strict; }
.event { display: grid; grid-template-columns: 2rem minmax(0, 1fr); gap: .5rem; padding: .45rem 0; border-bottom: 1px dashed var(--line); }
.seq { color: var(--muted); font: 12px ui-monospace, monospace; text-align: right; padding-top: .15rem; }
.kind { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; font-weight: 700; color: var(--accent); margin-right: .35rem; }
.kind-notice { color: var(--muted); } .kind-status { color: var(--fg); } .kind-error { color: var(--bad); }
.event .text { margin: .15rem 0 0; }
.event .data { color: var(--muted); font-size: 12px; }
.event .badge { min-width: 0; }
.event-child > div { padding-left: 1rem; border-left: 2px solid var(--line); }
.agent { font-weight: 600; }
.agent-path { margin: .1rem 0; }
.tree, .tree ul { list-style: none; margin: 0; padding-left: 1rem; }
.tree .child { margin: .35rem 0; }
.tool { font-weight: 700; }
.ok { color: var(--ok); font-weight: 600; } .err { color: var(--bad); font-weight: 600; }
.call { margin-top: .3rem; }
form.parked { border: 2px solid #f59e0b; background: #fffbeb; border-radius: 8px; padding: .75rem .9rem; margin-bottom: .75rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .5rem; }
.reject-step form { display: grid; gap: .5rem; margin-top: .75rem; }
.row-input { margin: .15rem 0 0; color: var(--muted); font-size: .85rem; overflow-wrap: anywhere; }
.row-asks { margin: .25rem 0 0; font-size: .8rem; overflow-wrap: anywhere; }
.decisions { margin: 0; padding-left: 1.2rem; }
table.budgets { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; table-layout: fixed; }
.budgets th { text-align: left; font-weight: 500; width: 34%; }
.budgets th, .budgets td { padding: .2rem .3rem; border-bottom: 1px solid var(--line); }
.budgets .num { text-align: right; }
.budgets .bar { width: 18%; }
.budgets meter { width: 100%; }
.stack { display: grid; gap: 1rem; align-content: start; min-width: 0; }
.diagram { height: 34rem; border: 1px solid var(--line); border-radius: 8px; background: #fff; }
.diagram svg { width: 1100px; max-width: none; height: auto; display: block; }
.transcript-box { height: 14.5rem; }
.transcript { list-style: none; margin: 0; padding: 0; display: grid; gap: .5rem; }
.msg { padding: .5rem .75rem; border-radius: 8px; background: #f3f4f6; max-width: 85%; }
.msg p { margin: .1rem 0 0; white-space: pre-wrap; }
.msg-user { background: var(--accent-bg); justify-self: end; }
.msg-tool { background: #f0fdf4; border: 1px solid #bbf7d0; }
.msg-system { background: #fafafa; border: 1px dashed var(--line); }
.who { font-size: .75rem; font-weight: 700; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
.chip { display: inline-block; margin: .25rem .25rem 0 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 0 .4rem; }
form.cancel { display: flex; gap: .5rem; flex-wrap: wrap; }
form.cancel input { flex: 1 1 12rem; }
@media (max-width: 720px) {
  main { padding: .75rem; }
  .grid { grid-template-columns: minmax(0, 1fr); }
  .summary { align-items: flex-start; }
  .summary .outcome { text-align: left; }
  .msg { max-width: 100%; }
  table.turns, .turns tbody, .turns tr, .turns td { display: block; width: 100%; }
  .turns thead { display: none; }
  .turns tr { border-bottom: 1px solid var(--line); padding: .4rem 0; }
  .turns td { border: 0; padding: .15rem .9rem; }
  .turns td.agent::before, .turns td.age::before { content: attr(data-label) ": "; color: var(--muted); }
  .row-waiting td:first-child { box-shadow: none; }
  .row-waiting { box-shadow: inset 4px 0 0 #f59e0b; }
  .timeline { height: 24rem; }
  .diagram { height: 26rem; }
}
`;

// Listens to the page's stream: each entry is appended to the timeline (and a message's bubble to
// the transcript, past the ones the page was rendered with), inside boxes of a fixed height; a
// panel the stream sends replaces the old one, except while someone types in it (it is shown when
// they leave it); the diagram's highlighted state is one attribute.
export const CONSOLE_JS = `
const url = document.body.dataset.stream;
const append = (box, list, markup) => {
  const follow = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  list.insertAdjacentHTML('beforeend', markup);
  if (follow) box.scrollTop = box.scrollHeight;
};
const waiting = new Map();
function show(name, markup) {
  const el = document.querySelector('[data-panel="' + name + '"]');
  if (!el) return;
  if (el.contains(document.activeElement) && el.querySelector('input:not([type=hidden])')) {
    if (!waiting.has(name)) el.addEventListener('focusout', () => setTimeout(() => {
      const later = waiting.get(name);
      waiting.delete(name);
      if (later !== undefined) show(name, later);
    }), { once: true });
    waiting.set(name, markup);
    return;
  }
  el.innerHTML = markup;
}
if (url) {
  const source = new EventSource(url);
  const box = document.querySelector('[data-panel="transcript"]');
  let messages = 0;
  source.addEventListener('timeline', (e) => {
    const entry = JSON.parse(e.data);
    const list = document.getElementById('timeline');
    if (list) append(list, list, entry.timeline);
    if (entry.transcript === undefined || !box) return;
    messages += 1;
    if (messages <= Number(box.dataset.count)) return;
    let bubbles = box.querySelector('ol.transcript');
    if (!bubbles) {
      box.innerHTML = '<ol class="transcript"></ol>';
      bubbles = box.querySelector('ol.transcript');
    }
    append(box, bubbles, entry.transcript);
  });
  source.addEventListener('panels', (e) => {
    for (const [name, markup] of Object.entries(JSON.parse(e.data))) {
      if (name !== 'state') {
        show(name, markup);
        continue;
      }
      const diagram = document.querySelector('.diagram');
      if (diagram) diagram.dataset.current = markup;
    }
  });
  source.addEventListener('end', () => source.close());
}
// Scrolls the diagram's box (never the page) so the highlighted state is in its middle.
function centreDiagram() {
  const box = document.querySelector('.diagram');
  const node = box && box.querySelector('[data-id="' + box.dataset.current + '"]');
  if (!node) return;
  const b = box.getBoundingClientRect();
  const n = node.getBoundingClientRect();
  box.scrollLeft += n.left + n.width / 2 - (b.left + b.width / 2);
  box.scrollTop += n.top + n.height / 2 - (b.top + b.height / 2);
}
centreDiagram();
new MutationObserver(centreDiagram).observe(document.querySelector('.diagram') || document.createElement('i'), { attributes: true, attributeFilter: ['data-current'] });
`;

/** A small state-machine mark: two states and a transition. */
export const CONSOLE_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#111827"/><circle cx="10" cy="16" r="5" fill="#818cf8"/><circle cx="23" cy="16" r="4" fill="none" stroke="#f9fafb" stroke-width="2"/><path d="M15 16h3" stroke="#f9fafb" stroke-width="2"/></svg>';

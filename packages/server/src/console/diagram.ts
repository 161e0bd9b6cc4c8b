// The turn machine's diagram: the Mermaid text @turnkit/check generates (`toMermaid(turnSpec)`,
// checked in as ./turn-machine.ts so neither @turnkit/check nor xstate loads at run time),
// rendered to SVG on the server by beautiful-mermaid (no DOM, no browser, no network). The SVG is
// made once per process; the current state is highlighted by CSS from a `data-current` attribute,
// so a status change in the page changes one attribute and never re-draws the diagram.

import type { TurnState } from '@turnkit/core';
import { renderMermaidSVG } from 'beautiful-mermaid';
import { TURN_MACHINE_MERMAID } from './turn-machine.js';

export interface Diagram {
  /** The SVG without its own <style> (the console's stylesheet carries it, so the page needs no inline styles). */
  readonly svg: string;
  /** The diagram's styles and one highlight rule per state, for the console's stylesheet. */
  readonly css: string;
  /** The Mermaid text the SVG was drawn from. */
  readonly mermaid: string;
  /** Every state drawn (the `data-id`s of its nodes and groups). */
  readonly states: readonly string[];
}

let cached: Diagram | null = null;

/** The diagram of core's turn machine (rendered on first use, about half a second, then kept). */
export function turnDiagram(): Diagram {
  cached ??= renderDiagram(TURN_MACHINE_MERMAID);
  return cached;
}

/** Renders a Mermaid state diagram to an SVG whose nodes can be highlighted by `data-current`. */
export function renderDiagram(mermaid: string): Diagram {
  const full = renderMermaidSVG(mermaid, { bg: '#ffffff', fg: '#1f2937', accent: '#4338ca', font: 'system-ui', padding: 16 });
  const style = /<style>([\s\S]*?)<\/style>/.exec(full)?.[1] ?? '';
  const svg = full
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/^<svg([^>]*?) style="[^"]*"/, '<svg$1 role="img" aria-label="The turn machine\'s states and transitions"')
    // A compound state's first child is drawn with its full id; show its own name like its siblings.
    .replace(/<g class="node" data-id="([a-z_]+)__([a-z_]+)"[\s\S]*?<\/g>/g, (group, parent: string, child: string) =>
      group
        .replaceAll(`"${parent}__${child}"`, `"${child}"`)
        .replace(`data-id="${child}"`, `data-id="${parent}__${child}"`)
        .replace(`>${parent}__${child}<`, `>${child}<`),
    );
  const states = [...new Set([...svg.matchAll(/class="(?:node|subgraph)" data-id="([a-z_]+)"/g)].map((m) => m[1] ?? ''))].filter(
    (id) => id !== '' && !id.startsWith('_') && id !== 'any_status',
  );
  const scoped = style
    .replace(/@import[^;]*;/g, '')
    .replace(/(^|\n)\s*svg\s*\{/, '$1.diagram svg {')
    .replace(/(^|\n)\s*text\s*\{[^}]*\}/, '$1.diagram text { font-family: system-ui, sans-serif; }');
  const highlight = states
    .map((id) => {
      const group = id.includes('__') ? `, .diagram[data-current="${id}"] [data-id="${id.split('__')[0]}"] > rect` : '';
      return `.diagram[data-current="${id}"] [data-id="${id}"] > rect${group} { fill: var(--hl-fill); stroke: var(--hl); stroke-width: 2.5; }\n.diagram[data-current="${id}"] [data-id="${id}"] > text { fill: var(--hl); font-weight: 700; }`;
    })
    .join('\n');
  return { svg, css: `${scoped}\n${highlight}\n`, mermaid, states };
}

/** The diagram node for a state: compound states name their sub-state (final-only when a final answer is forced). */
export function diagramState(state: TurnState | null, status: string): string {
  if (status === 'calling_model') return state?.forced ? 'calling_model__final_only' : 'calling_model__tools_allowed';
  if (status === 'finalizing') return state?.forced ? 'finalizing__forced' : 'finalizing__normal';
  return status;
}

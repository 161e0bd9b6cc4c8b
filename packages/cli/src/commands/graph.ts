// `turnkit graph`: the turn machine (@turnkit/check's turnSpec) as Mermaid or Graphviz dot.

export const GRAPH_FORMATS = ['mermaid', 'dot'] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

/** Prints the diagram; resolves to the exit code. */
export async function graphCommand(format: GraphFormat): Promise<number> {
  // Loaded when asked for, so the other commands start without the model checker.
  const { toDot, toMermaid, turnSpec } = await import('@turnkit/check');
  const text = format === 'dot' ? toDot(turnSpec) : toMermaid(turnSpec);
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}

// The file a suspended turn is written to, and reading it back for `turnkit resume`. Tools and
// models are code, so the file names the scenario to load them from; everything else (state,
// transcript, pending calls, grants) is the plain JSON of inline's suspended result.

import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Message, ParkedCall } from '@turnkit/core';
import type { BudgetUsage, Grant } from '@turnkit/dispatch';
import type { TurnResult } from '@turnkit/inline';
import { z } from 'zod';
import { UsageError } from './errors.js';
import { PROVIDERS, type ProviderOptions } from './provider.js';
import { mustBeFile, readJson } from './scenario.js';

export const SUSPENDED_KIND = 'turnkit-suspended-turn';

/** Options of the run that carry over to `resume` (output flags such as --json do not). */
export interface SavedOptions {
  readonly stream: boolean;
  readonly provider: ProviderOptions | null;
}

export interface SuspendedFile {
  readonly kind: typeof SUSPENDED_KIND;
  readonly version: 1;
  /** Absolute path of the scenario the tools (and scripted model) come from. */
  readonly scenario: string;
  readonly options: SavedOptions;
  /** Calls the scenario's own model answered so far: a scripted model is fast-forwarded by this many on resume. */
  readonly modelCalls: number;
  readonly state: unknown;
  readonly transcript: readonly Message[];
  readonly pending: readonly ParkedCall[];
  readonly grants: readonly Grant[];
  readonly budgetUsage?: BudgetUsage;
  /** Set once a resume ran the turn to its end, so the same approvals cannot run the tools twice. */
  readonly finished?: string;
}

const fileSchema = z.object({
  kind: z.literal(SUSPENDED_KIND),
  version: z.literal(1),
  scenario: z.string().min(1),
  options: z.object({
    stream: z.boolean(),
    provider: z.object({ provider: z.enum(PROVIDERS), model: z.string().min(1), baseUrl: z.string().optional() }).nullable(),
  }),
  modelCalls: z.number().int().nonnegative(),
  state: z.record(z.string(), z.unknown()),
  transcript: z.array(z.record(z.string(), z.unknown())),
  pending: z.array(z.object({ call: z.object({ id: z.string(), name: z.string() }).loose() }).loose()),
  grants: z.array(z.record(z.string(), z.unknown())),
  budgetUsage: z.record(z.string(), z.unknown()).optional(),
  finished: z.string().optional(),
});

/** The default file name for a suspended turn: `./turnkit-suspended-<turnId>.json`. */
export function defaultSavePath(turnId: string): string {
  return `./turnkit-suspended-${turnId.replace(/[^a-zA-Z0-9_.-]/g, '_')}.json`;
}

/** Writes the suspended result to `path`. */
export async function saveSuspended(path: string, scenario: string, options: SavedOptions, modelCalls: number, result: TurnResult): Promise<void> {
  const file: SuspendedFile = {
    kind: SUSPENDED_KIND,
    version: 1,
    scenario,
    options,
    modelCalls,
    state: result.state,
    transcript: result.transcript,
    pending: result.pending ?? [],
    grants: result.grants ?? [],
    ...(result.budgetUsage === undefined ? {} : { budgetUsage: result.budgetUsage }),
  };
  await writeJsonFile(path, file);
}

export async function writeJsonFile(path: string, value: unknown): Promise<void> {
  try {
    await writeFile(resolve(path), `${JSON.stringify(value, null, 2)}\n`, 'utf8');
  } catch (error) {
    throw new UsageError(`Could not write ${path}: ${error instanceof Error ? error.message : String(error)}.`);
  }
}

/** Reads and checks a suspended-turn file. */
export async function readSuspended(file: string): Promise<SuspendedFile> {
  const path = resolve(file);
  await mustBeFile(path, file, 'suspended turn');
  const parsed = fileSchema.safeParse(await readJson(path, file));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue === undefined || issue.path.length === 0 ? '' : ` (at ${issue.path.map(String).join('.')}: ${issue.message})`;
    throw new UsageError(`${file} is not a suspended turn written by \`turnkit run\`${at}.`);
  }
  const saved = parsed.data as unknown as SuspendedFile;
  if (saved.finished !== undefined) throw new UsageError(`${file} was already resumed and the turn ended (${saved.finished}); run the scenario again to start a new turn.`);
  return saved;
}

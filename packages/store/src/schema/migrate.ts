// Applying the migrations on open. `turnkit_schema` records which ran; an advisory lock makes
// concurrent opens of one database take turns.

import type { Sql } from '../db/types.js';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';

// Any constant: the key of the advisory lock that serialises migrations.
const MIGRATION_LOCK = 7_316_420_911;

/** Brings the schema up to date; refuses a database written by a newer @turnkit/store. */
export async function migrate(sql: Sql): Promise<number> {
  return sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS turnkit_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const [row] = await tx.query('SELECT coalesce(max(version), 0)::int AS version FROM turnkit_schema');
    const current = Number(row?.version ?? 0);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `This database has turnkit store schema version ${current}, newer than this @turnkit/store knows (${SCHEMA_VERSION}): upgrade @turnkit/store.`,
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version += 1) {
      // One statement per query: PGlite's `query` takes a single statement.
      for (const statement of (MIGRATIONS[version - 1] as string).split(/;\s*\n/)) {
        if (statement.trim() !== '') await tx.query(statement);
      }
      await tx.query('INSERT INTO turnkit_schema (version) VALUES ($1)', [version]);
    }
    return SCHEMA_VERSION;
  });
}

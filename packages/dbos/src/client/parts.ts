// What each job of the DBOS client (client/*.ts) works with.

import type { DBOSClient } from '@dbos-inc/dbos-sdk';
import type pg from 'pg';

/** The client's connection, schema and DBOS client, and how a submitted turn's workflow starts. */
export interface ClientParts {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly dbos: DBOSClient;
  /** Starts the turn's workflow: in this process when it runs turns, else on the queue, in the submit's transaction. */
  readonly start: (tx: pg.PoolClient, id: string) => Promise<(() => Promise<void>) | null>;
}

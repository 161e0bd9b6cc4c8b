// The one seam between the store and a database: run a statement, run a transaction. The same
// SQL runs on both drivers (PGlite in-process, a real Postgres through `pg`).

/** A row as the driver returns it (jsonb parsed, text as strings). */
export type Row = Record<string, unknown>;

/** Runs statements; `params` are bound as $1, $2, … */
export interface SqlQuery {
  query(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A database connection the store can use: statements, transactions, and closing. */
export interface Sql extends SqlQuery {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlQuery) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** `pglite` or `postgres`: what `openStore` opened. */
  readonly kind: 'pglite' | 'postgres';
  /** Postgres only: LISTENs on `channel` over a connection of its own that reconnects; resolves to the stop. */
  readonly listen?: (channel: string, handlers: ListenHandlers) => Promise<() => Promise<void>>;
}

/** Loads a driver module; tests replace it to see the message for a missing driver. */
export type ModuleLoader = (name: string) => Promise<unknown>;

export interface ListenHandlers {
  /** A turn may have become runnable (spurious calls are fine: a claim finds out). */
  readonly onNotify: () => void;
  /** The listening connection was lost (`lost`) or is back (`restored`; a wake-up follows, as some may be missed). */
  readonly onConnection?: (state: 'lost' | 'restored', error?: unknown) => void;
}

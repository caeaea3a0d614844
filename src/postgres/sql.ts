import type pg from "pg";

/** A pool or a checked-out client: both run one statement. */
export type Queryable = Pick<pg.Pool, "query"> | pg.PoolClient;

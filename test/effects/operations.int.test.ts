import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { OperationStore } from "../../src/effects/operations/types.js";
import { postgresOperationStore } from "../../src/postgres/operations.js";
import { sqliteOperationStore } from "../../src/sqlite/operations.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { operationsSuite } from "./scenarios/operations-suite.js";

const dir = mkdtempSync(join(tmpdir(), "oncely-ops-"));
const sqliteStores: OperationStore[] = [];
let n = 0;
operationsSuite({
  name: "sqlite",
  skip: "",
  async create() {
    const store = sqliteOperationStore({ path: join(dir, `ops-${++n}.db`) });
    await store.migrate();
    sqliteStores.push(store);
    return store;
  },
  async teardown() {
    for (const s of sqliteStores) await s.close();
    rmSync(dir, { recursive: true, force: true });
  },
});

const service = await probePostgres();
const schema = service.available ? await freshPgSchema("effects_ops") : undefined;
const pool = schema ? new pg.Pool({ connectionString: PG_URL, max: 10 }) : undefined;
operationsSuite({
  name: "postgres",
  skip: service.reason,
  async create() {
    // One schema for the file; each test uses its own keys.
    const store = postgresOperationStore({ ...(pool ? { pool } : {}), ...(schema ? { schema: schema.schema } : {}) });
    await store.migrate();
    return store;
  },
  async teardown() {
    await pool?.end();
    await schema?.drop();
  },
});

import { connect } from "node:net";
import pg from "pg";
import { postgresJournal } from "../../src/postgres/index.js";

/**
 * Real services on loopback for integration tests. Outside CI an unreachable service makes its
 * tests skip with the reason in their name; under CI=true it fails the run, so a green CI always
 * means the tests really ran against PostgreSQL and NATS.
 */

export const PG_URL = process.env.ONCELY_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const NATS_URL = process.env.ONCELY_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const inCI = process.env.CI === "true";

export interface Service {
  available: boolean;
  /** Why it is not available (for skip messages). */
  reason: string;
}

function unavailable(name: string, error: unknown): Service {
  const reason = `${name} unreachable: ${error instanceof Error ? error.message : String(error)}`;
  if (inCI) throw new Error(`${reason} (CI=true: integration tests must run against the real service)`);
  return { available: false, reason };
}

export async function probePostgres(): Promise<Service> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return { available: true, reason: "" };
  } catch (error) {
    return unavailable(`PostgreSQL at ${PG_URL}`, error);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function probeNats(): Promise<Service> {
  const url = new URL(NATS_URL);
  try {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port || 4222) });
      socket.setTimeout(3000, () => {
        socket.destroy();
        reject(new Error("timeout"));
      });
      socket.once("data", (data) => {
        socket.destroy();
        data.toString().startsWith("INFO") ? resolve() : reject(new Error("not a NATS server"));
      });
      socket.once("error", reject);
    });
    return { available: true, reason: "" };
  } catch (error) {
    return unavailable(`NATS at ${NATS_URL}`, error);
  }
}

/**
 * A fresh schema for one test file ("creating a database costs milliseconds"). Drop it with
 * the returned function in afterAll.
 */
export async function freshPgSchema(label: string): Promise<{ schema: string; drop: () => Promise<void> }> {
  const schema = `t_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${process.pid}_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`create schema "${schema}"`);
  } finally {
    await client.end();
  }
  return {
    schema,
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A fresh schema with every migration applied (by a journal opened and closed for it). */
export async function migratedPgSchema(label: string): Promise<{ schema: string; drop: () => Promise<void> }> {
  const fresh = await freshPgSchema(label);
  const journal = postgresJournal({ connectionString: PG_URL, schema: fresh.schema });
  try {
    await journal.migrate();
  } finally {
    await journal.close();
  }
  return fresh;
}

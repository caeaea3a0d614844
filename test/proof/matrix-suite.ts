import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FAULT_POINTS, type FaultMode } from "../../examples/shop/proof/matrix.js";
import { type CellResult, runCell } from "../../examples/shop/proof/run-cell.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

const postgres = await probePostgres();

/**
 * One mode of the crash-point matrix on each back end: for every fault point,
 * a fault there, recovery, and the audit against the providers' ledgers. Prints the matrix row.
 */
export function matrixSuite(mode: FaultMode, backends: ("sqlite" | "postgres")[]): void {
  for (const backend of backends) {
    const unavailable = backend === "postgres" && !postgres.available;
    describe.skipIf(unavailable)(
      `crash-point matrix: ${mode} on ${backend}${unavailable ? ` (${postgres.reason})` : ""}`,
      () => {
        const results: CellResult[] = [];
        const dir = mkdtempSync(join(tmpdir(), `oncely-matrix-${mode}-`));
        afterAll(() => {
          rmSync(dir, { recursive: true, force: true });
          const row = FAULT_POINTS.map((point) => {
            const r = results.find((x) => x.point === point);
            return `  ${point.padEnd(28)} ${r ? `${r.fired ? "fired" : "NOT FIRED"}, audit ${r.report.violated.length === 0 ? "clean" : `VIOLATED ${r.report.violated.join(",")}`}, ${r.durationMs} ms` : "not run"}`;
          });
          process.stdout.write(`crash-point matrix, ${mode} on ${backend}:\n${row.join("\n")}\n`);
        });
        for (const [index, point] of FAULT_POINTS.entries()) {
          it(`${point}: one charge per paid order, nothing lost, all terminal`, async () => {
            const database =
              backend === "sqlite"
                ? { url: `sqlite:${join(dir, `${point}.db`)}`, drop: async () => {} }
                : await freshPgSchema(`m_${mode}_${index}`).then(({ schema, drop }) => ({
                    url: `${PG_URL}?schema=${schema}`,
                    drop,
                  }));
            try {
              const result = await runCell({ point, mode, databaseUrl: database.url, after: index % 2 });
              results.push(result);
              expect(result.fired, `the ${mode} fault must really happen at ${point}`).toBe(true);
              expect(result.report.violated, JSON.stringify(result.report.checks.filter((c) => !c.ok))).toEqual([]);
              expect(result.report.orders.placed).toBe(3);
            } finally {
              await database.drop();
            }
          });
        }
      },
    );
  }
}

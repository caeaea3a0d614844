// A diagnostic, not a benchmark: counts every statement a process sends through the `pg` module,
// by its text, and writes the counts (most first) to $ONCELY_SQL_CENSUS_DIR/sql-<pid>.txt every
// second and at exit. Plain JavaScript so that it can be loaded before tsx, e.g. in the shop's
// workers:
//
//   ONCELY_WORKER_NODE_ARGS="--import ./bench/pg-statement-census.mjs" \
//     npm start -- --faults none --orders 1000 --db postgres://postgres@127.0.0.1:5432/test
//
// (docs/benchmarks.md, "The twelfth sitting": 57 statements an order before reads were batched, about 13 after.)
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.cwd(), "package.json"));
const pg = require("pg");
const dir = process.env.ONCELY_SQL_CENSUS_DIR ?? "/tmp/oncely-sql-census";
mkdirSync(dir, { recursive: true });
const counts = new Map();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, ...rest) {
  const text = typeof config === "string" ? config : (config?.text ?? config?.name ?? "?");
  const key = String(text).replace(/\s+/g, " ").trim().slice(0, 120);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return query.call(this, config, ...rest);
};
const write = () => {
  const rows = [...counts].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((n, [, count]) => n + count, 0);
  const lines = [`${total}\t(total)`, ...rows.map(([text, count]) => `${count}\t${text}`)];
  writeFileSync(join(dir, `sql-${process.pid}.txt`), `${lines.join("\n")}\n`);
};
setInterval(write, 1000).unref();
process.on("exit", write);

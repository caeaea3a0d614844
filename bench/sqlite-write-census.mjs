// A diagnostic, not a benchmark: counts every write a process sends to the SQLite journal, by
// kind (which parts a commit carries, and whose they are: stream category, consumer, collection),
// with the group-commit batches they went in and the process's CPU time, and writes the counts
// (most first) to $ONCELY_WRITE_CENSUS_DIR/writes-<pid>.txt every second and at exit. Loaded
// before tsx, in the shop's workers:
//
//   ONCELY_WORKER_NODE_ARGS="--import ./bench/sqlite-write-census.mjs" \
//     npm start -- --faults none --orders 1000 --cancel-rate 0 --out-of-stock-rate 0 --short-ship-rate 0
//
// It registers tsx itself to patch src/sqlite/journal.ts, the module the shop imports as
// `oncely/sqlite` (same file, so the same module instance).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

register();
const { SqliteJournal } = await import(pathToFileURL(join(process.cwd(), "src/sqlite/journal.ts")).href);
const dir = process.env.ONCELY_WRITE_CENSUS_DIR ?? "/tmp/oncely-write-census";
mkdirSync(dir, { recursive: true });
const counts = new Map();
const add = (key) => counts.set(key, (counts.get(key) ?? 0) + 1);
const category = (stream) => String(stream).split(/[/:]/)[0];
// An actor's inbox is keyed by its stream (`order/ord_…`): counted by category, not per actor.
const owner = (consumer) => (String(consumer).includes("/") ? `actor ${category(consumer)}` : consumer);

/** `events(order)+outbox+inbox[c]+checkpoint[c]`: the parts a commit carries, and whose. */
function kindOf(commit) {
  const parts = [];
  if (commit.events?.length) parts.push(`events(${category(commit.stream)})x${commit.events.length > 1 ? "n" : "1"}`);
  else if (commit.stream !== undefined) parts.push(`stream-only(${category(commit.stream)})`);
  if (commit.snapshot) parts.push("snapshot");
  if (commit.outbox?.length) parts.push("outbox");
  if (commit.outboxDone?.length) parts.push("outboxDone");
  if (commit.published?.length) parts.push(`published x${commit.published.length > 1 ? "n" : "1"}`);
  if (commit.inbox) parts.push(`inbox[${owner(commit.inbox.consumer)}]`);
  if (commit.checkpoint) parts.push(`checkpoint[${commit.checkpoint.consumer}]`);
  if (commit.checkpoints?.length) parts.push(`checkpoints[${commit.checkpoints.map((c) => c.consumer).join(",")}]`);
  if (commit.park?.length) parts.push("park");
  if (commit.unpark?.length) parts.push("unpark");
  if (commit.deadLetters?.length) parts.push("deadLetters");
  if (commit.documents?.length) parts.push(`documents(${[...new Set(commit.documents.map((d) => d.collection))]})`);
  return `commit ${parts.join("+") || "(empty)"}`;
}

// CPU from the first order's first write on: the start (tsx compiling the sources, migrations) left out.
let cpuAtFirstOrder;
const firstOrder = () => {
  cpuAtFirstOrder ??= process.cpuUsage();
};

const proto = SqliteJournal.prototype;
const wrap = (name, key) => {
  const original = proto[name];
  proto[name] = function counted(...args) {
    add(typeof key === "function" ? key(...args) : key);
    return original.apply(this, args);
  };
};
wrap("commit", (commit) => {
  if (commit.events?.length) firstOrder();
  return kindOf(commit);
});
const fields = (update) =>
  Object.keys(update ?? {})
    .filter((k) => k !== "status")
    .sort()
    .join(",");
const outboxKey = (name, update) => `${name} ${update?.status ?? "(no status)"} {${fields(update)}}`;
wrap("updateOutbox", (_id, _owner, update) => outboxKey("updateOutbox", update));
wrap("forceOutbox", (_id, update) => outboxKey("forceOutbox", update));
wrap("appendPublished", "appendPublished");
// Each claim is a BEGIN IMMEDIATE transaction of its own, whether it finds rows or not.
const claim = proto.claimOutbox;
proto.claimOutbox = async function counted(options) {
  const rows = await claim.call(this, options);
  add(`claimOutbox[${(options.categories ?? ["any"]).join(",")}] ${rows.length > 0 ? "rows" : "empty"}`);
  return rows;
};
wrap("writeBatch", "(group-commit batches)");

const sinceFirst = (cpu) =>
  cpuAtFirstOrder === undefined ? 0 : cpu.user + cpu.system - cpuAtFirstOrder.user - cpuAtFirstOrder.system;
const write = () => {
  const rows = [...counts].sort((a, b) => b[1] - a[1]);
  const writes = rows.filter(([key]) => !key.startsWith("(")).reduce((n, [, count]) => n + count, 0);
  const cpu = process.cpuUsage();
  const lines = [
    `${writes}\t(writes)`,
    `${Math.round((cpu.user + cpu.system) / 1000)}\t(cpu ms, user ${Math.round(cpu.user / 1000)})`,
    `${Math.round(sinceFirst(cpu) / 1000)}\t(cpu ms since the first event committed)`,
    ...rows.map(([text, count]) => `${count}\t${text}`),
  ];
  writeFileSync(join(dir, `writes-${process.pid}.txt`), `${lines.join("\n")}\n`);
};
setInterval(write, 1000).unref();
process.on("exit", write);

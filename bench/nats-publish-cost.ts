import { jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connectNats } from "../src/nats/connection.js";

/**
 * A diagnostic, not a benchmark section: the client CPU of one JetStream publish on a connection
 * from `connectNats`, as it is (no async traces) or with nats.js's async traces back (`--traces`),
 * 20,000 publishes 100 at a time to a memory stream made and deleted for the run:
 *
 *   npx tsx bench/nats-publish-cost.ts [--traces]
 */
const traces = process.argv.includes("--traces");
const nc = await connectNats(process.env.ONCELY_TEST_NATS_URL ?? "nats://127.0.0.1:4222", {
  ...(traces ? { noAsyncTraces: false } : {}),
  maxReconnectAttempts: 0,
});
const jsm = await jetstreamManager(nc);
const name = `ONCELY_PUBLISH_COST_${process.pid}`;
const subject = `oncely-publish-cost-${process.pid}.x`;
await jsm.streams.add({ name, subjects: [subject], storage: StorageType.Memory });
try {
  const js = jetstream(nc);
  const total = 20_000;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < total; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => js.publish(subject, `m${i + j}`)));
  }
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const usPerPublish = (cpu.user + cpu.system) / total;
  console.log(
    `async traces ${traces ? "on" : "off"}: ${total} publishes in ${ms.toFixed(0)} ms, client CPU ${usPerPublish.toFixed(1)} µs a publish`,
  );
} finally {
  await jsm.streams.delete(name);
  await nc.close();
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../src/nats/connection.js";
import { DEFAULT_ACK_WAIT_MS, NatsTransport } from "../../src/nats/transport.js";
import { NATS_URL, probeNats } from "../support/services.js";
import { natsFixture, waitFor } from "./support/nats.js";

/**
 * `ack_wait` is how long the messages a killed process held wait before another instance gets
 * them. At NATS's 30 s, the chaos run (workers SIGKILLed every few seconds) saw integration
 * events arrive 30, 60, 85 s late and timed out. A short `ack_wait` is only safe if a message
 * still in handling is not handed to a second instance meanwhile: the pull loop reports progress.
 */

const nats = await probeNats();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!nats.available)(`ack_wait on NATS JetStream ${nats.reason}`, () => {
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  beforeAll(async () => {
    // The fixture's transports use ack_wait = 1 s.
    fx = await natsFixture("ackwait");
  });
  afterAll(async () => {
    await fx?.cleanup();
  });

  it("a handler that takes several ack_wait periods gets its message once: it is reported in progress", async () => {
    const body = JSON.stringify({ slow: true });
    await fx.transport.publishRaw(`${fx.prefix}.slow.one`, body, "slow-1");
    const deliveries: number[] = [];
    let finished = false;
    const sub = await fx.transport.subscribe("slow", { subjects: [`${fx.prefix}.slow.*`] }, async (d) => {
      deliveries.push(d.attempt);
      // 3.5 ack_wait periods: without progress reports the server redelivers it three times meanwhile.
      if (deliveries.length === 1) await sleep(3500);
      finished = true;
      return { kind: "ack" };
    });
    try {
      await waitFor(() => finished, "the slow handler to finish");
      // Long enough for a redelivery that was already under way to arrive.
      await sleep(1500);
      expect(deliveries).toEqual([1]);
    } finally {
      await sub.stop();
    }
  });

  it("durables are created with the short default ack_wait, so a dead process's messages come back soon", async () => {
    const transport = await NatsTransport.create({
      connection: await connectNats(NATS_URL),
      ownsConnection: true,
      stream: fx.stream,
      subjects: [`${fx.prefix}.>`],
      storage: "memory",
    });
    try {
      await transport.subscribe("defaults", { subjects: [`${fx.prefix}.defaults.*`] }, async () => ({ kind: "ack" }));
      const info = await transport.manager.consumers.info(fx.stream, "defaults");
      expect(info.config.ack_wait).toBe(DEFAULT_ACK_WAIT_MS * 1_000_000);
      expect(DEFAULT_ACK_WAIT_MS).toBeLessThanOrEqual(5000);
    } finally {
      await transport.close();
    }
  });
});

import type { JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../src/nats/connection.js";
import { jetStreamClient } from "../../src/nats/driver.js";
import { ensureDurable, ensureStream, NatsSetupError } from "../../src/nats/setup.js";
import { NatsTransport } from "../../src/nats/transport.js";
import { NATS_URL, probeNats } from "../support/services.js";

const nats = await probeNats();

/**
 * Setting up is where a misconfiguration shows: the server's own reason must reach the operator,
 * not a follow-up error of the fallback (an update of a stream that was never created).
 */
describe.skipIf(!nats.available)(`NATS stream and durable setup ${nats.reason}`, () => {
  const unique = `setup_${process.pid}_${Date.now().toString(36)}`;
  const holder = `T_${unique}_HOLDER`.toUpperCase();
  const prefix = `t_${unique}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const streams = [holder];

  beforeAll(async () => {
    nc = await connectNats(NATS_URL);
    jsm = await jetStreamClient.jetstreamManager(nc);
    await ensureStream(jsm, { name: holder, subjects: [`${prefix}.orders.>`], storage: "memory" });
  });
  afterAll(async () => {
    for (const stream of streams) await jsm?.streams.delete(stream).catch(() => {});
    await nc?.close();
  });

  it("a stream whose subjects overlap another's fails with the server's reason, naming both streams and the subjects", async () => {
    const name = `T_${unique}_WIDE`.toUpperCase();
    streams.push(name);
    const error = await ensureStream(jsm, { name, subjects: [`${prefix}.>`], storage: "memory" }).catch((e) => e);
    expect(error).toBeInstanceOf(NatsSetupError);
    expect(error).toMatchObject({ stream: name, subjects: [`${prefix}.>`], retryable: false });
    expect(error.serverMessage).toMatch(/subjects overlap with an existing stream/);
    expect(error.message).toContain(`stream "${name}"`);
    expect(error.message).toContain(`${prefix}.>`);
    expect(error.message).toContain("subjects overlap with an existing stream");
    expect(error.message).toContain(`held by stream(s) ${holder}`);
    // Nothing was created under the refused name.
    expect(await jsm.streams.info(name).catch((e) => e.name)).toBe("StreamNotFoundError");
  });

  it("the transport's own setup surfaces the same error", async () => {
    const name = `T_${unique}_TRANSPORT`.toUpperCase();
    streams.push(name);
    const error = await NatsTransport.create({
      connection: nc,
      stream: name,
      subjects: [`${prefix}.orders.placed`],
      storage: "memory",
    }).catch((e) => e);
    expect(error).toBeInstanceOf(NatsSetupError);
    expect(error.message).toMatch(/subjects overlap with an existing stream/);
  });

  it("an existing stream is still brought to the requested config", async () => {
    const name = `T_${unique}_EXISTING`.toUpperCase();
    streams.push(name);
    await ensureStream(jsm, { name, subjects: [`${prefix}.a.>`], storage: "memory" });
    await ensureStream(jsm, { name, subjects: [`${prefix}.a.>`, `${prefix}.b.>`], storage: "memory" });
    expect((await jsm.streams.info(name)).config.subjects).toEqual([`${prefix}.a.>`, `${prefix}.b.>`]);
  });

  it("a durable whose filter lies outside the stream fails with the server's reason, naming the consumer", async () => {
    const error = await ensureDurable(jsm, {
      stream: holder,
      name: "outside",
      subjects: [`${prefix}.payments.>`],
      maxDeliver: -1,
      ackWaitMs: 1000,
      maxAckPending: 10,
    }).catch((e) => e);
    expect(error).toBeInstanceOf(NatsSetupError);
    expect(error).toMatchObject({ stream: holder, consumer: "outside", subjects: [`${prefix}.payments.>`] });
    expect(error.message).toContain(`durable consumer "outside" on stream "${holder}"`);
    expect(error.message).toMatch(/filter subject/);
    expect(error.message).not.toMatch(/consumer not found/);
  });
});

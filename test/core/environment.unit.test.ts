import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { randomIds, sequentialIds, systemClock, systemRandom } from "../../src/core/clock.js";
import { resolveEnvironment } from "../../src/core/environment.js";
import { ArmableFaults, noFaults } from "../../src/core/faults.js";
import { defaultLogger, silentLogger } from "../../src/core/logger.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { Relay } from "../../src/messaging/relay.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, orderFacts } from "../messaging/support/orders.js";

describe("resolveEnvironment", () => {
  it("keeps every part it is given, the same object", () => {
    const given = {
      clock: new SimulatedClock(),
      random: { next: () => 0.5 },
      ids: sequentialIds("t"),
      logger: silentLogger,
      faults: new ArmableFaults(),
      registry: new Registry(),
    };
    const env = resolveEnvironment(given);
    for (const part of Object.keys(given) as (keyof typeof given)[]) expect(env[part]).toBe(given[part]);
  });

  it("defaults each missing part: system clock and random, time-ordered ids, the default logger, no faults", () => {
    const env = resolveEnvironment({ clock: undefined });
    expect(env.clock).toBe(systemClock);
    expect(env.random).toBe(systemRandom);
    expect(env.ids).toBe(randomIds);
    expect(env.logger).toBe(defaultLogger());
    expect(env.faults).toBe(noFaults);
  });

  it("gives each environment resolved without one a registry of its own, never the global one", () => {
    const a = resolveEnvironment();
    const b = resolveEnvironment();
    expect(a.registry).toBeInstanceOf(Registry);
    expect(a.registry).not.toBe(b.registry);
    // Resolving a resolved environment changes nothing: a host's components share its parts.
    expect(resolveEnvironment(a)).toEqual(a);
    expect(resolveEnvironment(a).registry).toBe(a.registry);
  });
});

describe("a component's registry comes from its environment", () => {
  it("a relay built with a registry and no metrics registers its metrics there", () => {
    const registry = new Registry();
    new Relay({ journal: memoryJournal(), transport: new InProcessTransport(), registry });
    expect(registry.getSingleMetric("oncely_dead_letters_total")).toBeDefined();
  });

  it("a consumer built with a registry and no metrics counts what it handles there", async () => {
    const registry = new Registry();
    const consumer = new Consumer({ name: "facts", journal: memoryJournal(), handler: orderFacts, registry });
    expect((await consumer.handle(orderEvent("o1", 1))).outcome).toBe("applied");
    const handled = await registry.getSingleMetric("oncely_consumer_messages_total")?.get();
    expect(handled?.values).toContainEqual({ labels: { consumer: "facts", outcome: "applied" }, value: 1 });
  });
});

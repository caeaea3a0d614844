import { describe } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { handOverSuite } from "../messaging/support/hand-over-suite.js";
import { probeNats } from "../support/services.js";
import { natsFixture } from "./support/nats.js";

const nats = await probeNats();

describe.skipIf(!nats.available)(`events handed over at commit: NATS JetStream ${nats.reason}`, () => {
  let n = 0;
  handOverSuite(async () => {
    const fx = await natsFixture(`handover${++n}`);
    return { journal: new MemoryJournal(), transport: fx.transport, prefix: fx.prefix, close: () => fx.cleanup() };
  });
});

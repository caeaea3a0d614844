#!/usr/bin/env node
// A user's own operator CLI, as the README shows it: the oncely CLI with the application's
// consumers, so `dead-letters replay` runs a letter through the consumer that dead-lettered it.
import { Consumer, defineProjection, runOncelyCli } from "oncely";

const perEvent = defineProjection<{ count: number }>({
  collection: "per-event",
  key: (envelope) => envelope.eventId,
  project: (doc) => ({ count: (doc?.count ?? 0) + 1 }),
});

await runOncelyCli({
  name: "shop-ops",
  consumers: (journal) => [new Consumer({ name: "view", journal, handler: perEvent })],
});

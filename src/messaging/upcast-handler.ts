import { checkSchemas, currentVersion, type Schemas, upcast } from "../core/upcast.js";
import type { Envelope } from "./envelope.js";
import type { ConsumerHandler } from "./handlers.js";

/**
 * The envelope with its payload in the shape this consumer's code reads: `schemas` (per event
 * type) upcast a payload stored at an older `schemaVersion` (absent: 1). A payload with no path
 * throws `UpcastError`, which the consumer dead-letters with reason `unreadable-version`; one newer
 * than the declared version throws `VersionTooNewError`, which the consumer leaves for a newer
 * worker (nak with a long delay, never dead-lettered for it: see `Consumer.deliver`). Never
 * applied to what the inbox stores: dedup and conflict checks compare the message as it was
 * sent, so an upgrade never turns a duplicate into a conflict.
 */
export function readEnvelope(reader: string, schemas: Schemas | undefined, envelope: Envelope): Envelope {
  const stored = envelope.schemaVersion ?? 1;
  const payload = upcast(reader, schemas, envelope.type, stored, envelope.payload);
  if (payload === envelope.payload) return envelope;
  return { ...envelope, payload, schemaVersion: currentVersion(reader, schemas, envelope.type) };
}

/** The handler, each of whose calls sees the envelope through `readEnvelope`. */
export function upcastingHandler(consumer: string, handler: ConsumerHandler, schemas?: Schemas): ConsumerHandler {
  const reader = `consumer "${consumer}"`;
  checkSchemas(reader, schemas);
  const read = (envelope: Envelope) => readEnvelope(reader, schemas, envelope);
  if (handler.kind === "command") return { kind: "command", route: (envelope) => handler.route(read(envelope)) };
  return {
    kind: "projection",
    collection: handler.collection,
    key: (envelope) => handler.key(read(envelope)),
    project: (doc, envelope, tools) => handler.project(doc, read(envelope), tools),
  };
}

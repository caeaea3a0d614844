import type { Transport } from "oncely";
import { InvalidInputError, RoutedTransport } from "oncely";
import { z } from "zod";
import { SHOP_SUBJECT_PREFIX } from "./events.js";
import { jsonVariable } from "./json-variable.js";
import { SIGNING_CONTEXTS } from "./keys.js";

/**
 * Broker authorization for the shop on NATS: each context connects as its own user, which may
 * publish integration events only on `shop.<its source>.>`. Besides that it may use what
 * JetStream needs: the API (`$JS.API.>`: stream and consumer setup, pull requests), acks
 * (`$JS.ACK.>`) and replies to its own inbox (`_INBOX.>`). The views have a user that publishes
 * no event at all.
 *
 * What this does not stop: `$JS.API.>` also allows managing streams (deleting `SHOP`, say). A
 * deployment that wants that closed narrows it per user to the consumer and publish calls it
 * makes and lets an operator account own the stream; the signatures are the other line of
 * defence either way, since a consumer believes only what verifies.
 */

/** NATS users of the shop: the signing contexts plus `views` (order views and timeline). */
export const NATS_USERS = [...SIGNING_CONTEXTS, "views"] as const;
export type NatsUser = (typeof NATS_USERS)[number];
export type NatsPasswords = Record<NatsUser, string>;

/** `NATS_PASSWORDS`: a JSON object with a password for every user. */
export const natsPasswordsVariable = jsonVariable(
  z.strictObject(Object.fromEntries(NATS_USERS.map((u) => [u, z.string().min(1)])) as Record<NatsUser, z.ZodString>),
  `a JSON object with a password for each of ${NATS_USERS.join(", ")}`,
);

/** The user each durable consumer of `shopIntegration` connects as. */
export const CONSUMER_USER: Readonly<Record<string, NatsUser>> = {
  ordering: "ordering",
  payment: "payment",
  fulfillment: "fulfillment",
  "order-views": "views",
  "order-timeline": "views",
};

/** What a user may publish: its own subjects (none for `views`) and JetStream's. */
export function publishAllowed(user: NatsUser): string[] {
  const own = user === "views" ? [] : [`${SHOP_SUBJECT_PREFIX}.${user}.>`];
  return [...own, "$JS.API.>", "$JS.ACK.>"];
}

const quote = (value: string): string => {
  if (/["\\\n]/.test(value)) throw new InvalidInputError("NATS config values must not contain quotes or newlines");
  return `"${value}"`;
};

/** The `authorization` block of a nats-server configuration for the shop's users. */
export function natsAuthorization(passwords: NatsPasswords): string {
  const users = NATS_USERS.map((user) => {
    const publish = publishAllowed(user).map(quote).join(", ");
    return [
      `    { user: ${quote(user)}, password: ${quote(passwords[user])},`,
      `      permissions: { publish: { allow: [${publish}] }, subscribe: { allow: ["_INBOX.>"] } } }`,
    ].join("\n");
  });
  return `authorization {\n  users: [\n${users.join(",\n")}\n  ]\n}\n`;
}

/** A whole nats-server configuration: loopback listener, JetStream in `storeDir`, the shop's users. */
export function natsServerConfig(options: { port: number; storeDir: string; passwords: NatsPasswords }): string {
  return [
    `listen: ${quote(`127.0.0.1:${options.port}`)}`,
    `jetstream { store_dir: ${quote(options.storeDir)} }`,
    natsAuthorization(options.passwords),
  ].join("\n");
}

/**
 * One transport per user (`open(user)` connects as that user) behind a `RoutedTransport`: events
 * are published by their source's connection, consumers subscribe through their own user's.
 */
export async function transportPerUser(open: (user: NatsUser) => Promise<Transport>): Promise<Transport> {
  const byUser = new Map<NatsUser, Transport>();
  try {
    for (const user of NATS_USERS) byUser.set(user, await open(user));
  } catch (error) {
    await Promise.all([...byUser.values()].map((t) => t.close().catch(() => {})));
    throw error;
  }
  const of = (user: NatsUser) => byUser.get(user) as Transport;
  return new RoutedTransport({
    publishers: Object.fromEntries(SIGNING_CONTEXTS.map((c) => [c, of(c)])),
    subscribers: Object.fromEntries(Object.entries(CONSUMER_USER).map(([consumer, user]) => [consumer, of(user)])),
  });
}

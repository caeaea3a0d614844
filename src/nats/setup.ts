import type { JetStreamManager } from "@nats-io/jetstream";
import { InvalidInputError } from "../base/errors.js";
import { jetStreamClient, natsNode } from "./driver.js";

const { AckPolicy, DeliverPolicy, JetStreamApiError, StorageType } = jetStreamClient;
const { nanos } = natsNode;

export interface StreamSetup {
  name: string;
  subjects: string[];
  /** Window in which a repeated `Nats-Msg-Id` (eventId) is stored once. Default 2 minutes. */
  duplicateWindowMs?: number;
  storage?: "file" | "memory";
}

/** Create the stream, or update it to this config if it exists (idempotent; safe from several processes). */
export async function ensureStream(jsm: JetStreamManager, setup: StreamSetup): Promise<void> {
  const config = {
    name: setup.name,
    subjects: setup.subjects,
    duplicate_window: nanos(setup.duplicateWindowMs ?? 120_000),
    storage: setup.storage === "memory" ? StorageType.Memory : StorageType.File,
  };
  try {
    await jsm.streams.add(config);
  } catch (error) {
    if (!(error instanceof JetStreamApiError)) throw error;
    // Exists with another config (or created concurrently): bring it to ours.
    const { name: _name, storage: _storage, ...update } = config;
    await jsm.streams.update(setup.name, update);
  }
}

export interface DurableSetup {
  stream: string;
  name: string;
  subjects: string[];
  /** Server-side delivery limit (max_deliver). */
  maxDeliver: number;
  /** A delivery not acked within this time is redelivered (a consumer died mid-handling). */
  ackWaitMs: number;
  maxAckPending: number;
}

/** Create the durable pull consumer with explicit ack, or update it (idempotent). */
export async function ensureDurable(jsm: JetStreamManager, setup: DurableSetup): Promise<void> {
  if (setup.subjects.length === 0) throw new InvalidInputError(`consumer "${setup.name}" needs at least one subject`);
  // One filter uses `filter_subject`, which every JetStream server supports; several need
  // `filter_subjects` (server 2.10+), which the client refuses to send to an older server.
  const filter =
    setup.subjects.length === 1 ? { filter_subject: setup.subjects[0] as string } : { filter_subjects: setup.subjects };
  const update = {
    ack_wait: nanos(setup.ackWaitMs),
    max_deliver: setup.maxDeliver,
    max_ack_pending: setup.maxAckPending,
    ...filter,
  };
  try {
    await jsm.consumers.add(setup.stream, {
      ...update,
      durable_name: setup.name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
  } catch (error) {
    if (!(error instanceof JetStreamApiError)) throw error;
    await jsm.consumers.update(setup.stream, setup.name, update);
  }
}

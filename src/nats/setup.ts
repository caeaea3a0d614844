import type { JetStreamManager } from "@nats-io/jetstream";
import { NATS_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError, TerminalError } from "../base/errors.js";
import { jetStreamClient, natsNode } from "./driver.js";

const { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, StorageType } = jetStreamClient;
const { nanos } = natsNode;

/** JetStream's code for "subjects overlap with an existing stream". */
const SUBJECTS_OVERLAP = 10065;

/**
 * The server refused to create or update a stream or durable consumer. The message names what was
 * asked (stream, subjects, consumer) and says what the server said, with its error code: setting
 * up is the one place a misconfiguration shows, so it must not come out as a follow-up error.
 * Terminal: the same configuration meets the same refusal.
 */
export class NatsSetupError extends TerminalError {
  constructor(
    readonly stream: string,
    readonly subjects: readonly string[],
    /** What the server said (its description), e.g. `subjects overlap with an existing stream`. */
    readonly serverMessage: string,
    /** JetStream's error code (`err_code`), when the server gave one. */
    readonly serverCode: number | undefined,
    readonly consumer?: string,
    detail = "",
    options?: { cause?: unknown },
  ) {
    const what = consumer === undefined ? `stream "${stream}"` : `durable consumer "${consumer}" on stream "${stream}"`;
    const code = serverCode === undefined ? "" : ` (JetStream error ${serverCode})`;
    super(
      `NATS refused to set up ${what} with subjects ${subjects.join(", ")}: ${serverMessage}${code}${detail}`,
      options,
    );
  }
}

const notFound = (error: unknown, code: number): boolean => error instanceof JetStreamApiError && error.code === code;

export interface StreamSetup {
  name: string;
  subjects: string[];
  /** Window in which a repeated `Nats-Msg-Id` (eventId) is stored once. Default 2 minutes. */
  duplicateWindowMs?: number;
  storage?: "file" | "memory";
}

/**
 * Create the stream, or update it to this config if it exists (idempotent; safe from several
 * processes). A refusal throws `NatsSetupError` with the server's reason; for overlapping
 * subjects it also names the streams that hold them.
 */
export async function ensureStream(jsm: JetStreamManager, setup: StreamSetup): Promise<void> {
  const config = {
    name: setup.name,
    subjects: setup.subjects,
    duplicate_window: nanos(setup.duplicateWindowMs ?? NATS_DEFAULTS.duplicateWindowMs),
    storage: setup.storage === "memory" ? StorageType.Memory : StorageType.File,
  };
  try {
    await jsm.streams.add(config);
    return;
  } catch (error) {
    if (!(error instanceof JetStreamApiError)) throw error;
    // Exists with another config (or created concurrently): bring it to ours, below. Anything else
    // (the subjects overlap another stream's, a limit) is the real error: an update would only
    // add "stream not found" on top of it.
    const { name: _name, storage: _storage, ...update } = config;
    try {
      await jsm.streams.update(setup.name, update);
    } catch (updateError) {
      const refusal = notFound(updateError, JetStreamApiCodes.StreamNotFound) ? error : updateError;
      if (!(refusal instanceof JetStreamApiError)) throw updateError;
      const detail = refusal.code === SUBJECTS_OVERLAP ? await overlapping(jsm, setup) : "";
      throw new NatsSetupError(setup.name, setup.subjects, refusal.message, refusal.code, undefined, detail, {
        cause: refusal,
      });
    }
  }
}

/** `; held by stream(s) A, B`: the streams whose subjects collide with ours, best effort. */
async function overlapping(jsm: JetStreamManager, setup: StreamSetup): Promise<string> {
  try {
    const holders = new Set<string>();
    for (const subject of setup.subjects) {
      for await (const name of jsm.streams.names(subject)) if (name !== setup.name) holders.add(name);
    }
    return holders.size === 0 ? "" : `; held by stream(s) ${[...holders].sort().join(", ")}`;
  } catch {
    return "";
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

/**
 * Create the durable pull consumer with explicit ack, or update it (idempotent). A refusal throws
 * `NatsSetupError` with the server's reason (e.g. a filter outside the stream's subjects).
 */
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
    try {
      await jsm.consumers.update(setup.stream, setup.name, update);
    } catch (updateError) {
      const refusal = notFound(updateError, JetStreamApiCodes.ConsumerNotFound) ? error : updateError;
      if (!(refusal instanceof JetStreamApiError)) throw updateError;
      throw new NatsSetupError(setup.stream, setup.subjects, refusal.message, refusal.code, setup.name, "", {
        cause: refusal,
      });
    }
  }
}

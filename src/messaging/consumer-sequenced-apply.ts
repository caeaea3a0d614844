import { DuplicateMessageError } from "../base/errors.js";
import type { CheckpointWrite, Commit } from "../journal/types.js";
import type { ConsumerContext } from "./consumer-context.js";
import type { Envelope } from "./envelope.js";

/**
 * Sequenced mode: apply the next expected version of a source stream, whether it was just
 * delivered (`handleSequenced`) or released from the parked ones (`ParkedRelease`). Call under the
 * source's lock.
 *
 * The update, the inbox row, the checkpoint advance (guarded by the expected previous version) and
 * the unpark of this version go in one commit. A projection's commit also guards the document's
 * revision (`<name>#doc`, as in facts mode), under a lock per document: events of several source
 * streams may write one document, and neither concurrent deliveries here nor another instance of
 * this consumer may lose an update to it.
 */
export async function applyNext(
  c: ConsumerContext,
  envelope: Envelope,
  source: string,
  checkpoint: number,
): Promise<"applied" | "duplicate" | "ignored"> {
  const version = checkpoint + 1;
  const advance = {
    checkpoint: { consumer: c.name, source, version, expected: checkpoint },
    unpark: [{ consumer: c.name, source, version }],
  };
  const action = actionFor(c, envelope);
  if (action === "ignore" || action === "command") {
    // The actor dedups by eventId; our commit after it only records progress.
    const sent = action === "command" ? await c.sendCommand(envelope) : "ignored";
    const outcome = await commitAdvance(c, envelope, advance, []);
    return outcome === "duplicate" || sent === "duplicate" ? "duplicate" : sent;
  }
  return c.locks.run(`doc:${action.collection}/${action.id}`, async () => {
    const { guard, revision, current } = await c.documentAndRevision(action.collection, action.id);
    const { documents, backwards } = c.projectDocument(envelope, action.id, current);
    const outcome = await commitAdvance(c, envelope, advance, documents, {
      ...guard,
      version: revision + 1,
      expected: revision,
    });
    if (outcome === "applied") c.countBackwards(backwards);
    return outcome;
  });
}

/**
 * What this consumer does with a sequenced event. Every version is consumed in order, so an event
 * the consumer passes over (a type outside `types`, a projection key or command route of
 * `undefined`) still advances the checkpoint, as a no-op with its inbox row: it never holds up the
 * versions behind it, and is counted as `ignored`.
 */
function actionFor(c: ConsumerContext, envelope: Envelope): "ignore" | "command" | { collection: string; id: string } {
  if (c.types && !c.types.has(envelope.type)) return "ignore";
  const handler = c.handler;
  if (handler.kind === "command") return handler.route(envelope) === undefined ? "ignore" : "command";
  const id = handler.key(envelope);
  return id === undefined ? "ignore" : { collection: handler.collection, id };
}

/** Commit one applied version; a message id handled under another version slot only advances. */
async function commitAdvance(
  c: ConsumerContext,
  envelope: Envelope,
  advance: Pick<Commit, "checkpoint" | "unpark">,
  documents: Commit["documents"],
  revision?: CheckpointWrite,
): Promise<"applied" | "duplicate"> {
  try {
    await c.journal.commit({
      inbox: c.inboxRow(envelope),
      documents,
      ...advance,
      ...(revision ? { checkpoints: [revision] } : {}),
      now: c.clock.now(),
    });
  } catch (error) {
    if (!(error instanceof DuplicateMessageError)) throw error;
    // The eventId was handled before under another version slot (a replay, or a producer that
    // reused an id): do not apply it twice, but do not leave the stream stuck either.
    await c.journal.commit({ ...advance, now: c.clock.now() });
    return "duplicate";
  }
  const checkpointStoredFault = c.faults.hit("consumer.checkpointStored");
  if (checkpointStoredFault) await checkpointStoredFault;
  return "applied";
}

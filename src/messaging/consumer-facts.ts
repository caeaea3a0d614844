import { DuplicateMessageError } from "../base/errors.js";
import type { ConsumerContext } from "./consumer-context.js";
import type { Envelope } from "./envelope.js";
import type { HandleResult } from "./handlers.js";

/**
 * Facts mode: each event is applied when it arrives; the handler's updates must be monotonic and
 * commutative. A document is read, projected and written with an optimistic guard (a checkpoint
 * `(<name>#doc, <collection>/<id>)` used as the document's revision), so two instances of one
 * consumer never lose an update.
 */
export async function handleFact(c: ConsumerContext, envelope: Envelope): Promise<HandleResult> {
  const handler = c.handler;
  if (handler.kind === "command") return handleFactCommand(c, envelope);
  const id = handler.key(envelope);
  if (id === undefined) return { outcome: "ignored", released: 0 };
  return c.locks.run(`doc:${handler.collection}/${id}`, () =>
    c.withConflictRetries(async () => {
      // No read of the inbox before the write: the commit's inbox row refuses a message handled
      // before, with nothing written (a journal conformance rule), and only then is the held row
      // read, to tell an exact duplicate from a conflict. Should the revision guard refuse first
      // (another instance moved the document), the retry reads again and meets the duplicate. A
      // duplicate costs a projection that is thrown away; every other message one statement less.
      // The document and its revision in one read (one view: no commit between the two).
      const { guard, revision, current } = await c.documentAndRevision(handler.collection, id);
      const { documents, backwards } = c.projectDocument(envelope, id, current);
      try {
        await c.journal.commit({
          inbox: c.inboxRow(envelope),
          documents,
          checkpoint: { ...guard, version: revision + 1, expected: revision },
          now: c.clock.now(),
        });
      } catch (error) {
        if (error instanceof DuplicateMessageError && (await c.alreadyHandled(envelope))) {
          return { outcome: "duplicate", released: 0 };
        }
        throw error;
      }
      c.countBackwards(backwards);
      return { outcome: "applied", released: 0 };
    }),
  );
}

/**
 * The actor's inbox dedups the command; the consumer's own inbox row, committed after it, holds
 * the message's hash so a later copy with other content is a conflict, not a duplicate.
 * Failure window: a crash between the actor's commit and this one leaves no row; the
 * redelivery reaches the actor again (which answers from its inbox) and writes the row then.
 */
async function handleFactCommand(c: ConsumerContext, envelope: Envelope): Promise<HandleResult> {
  if (await c.alreadyHandled(envelope)) return { outcome: "duplicate", released: 0 };
  const outcome = await c.sendCommand(envelope);
  if (outcome === "ignored") return { outcome, released: 0 };
  try {
    await c.journal.commit({ inbox: c.inboxRow(envelope), now: c.clock.now() });
  } catch (error) {
    if (!(error instanceof DuplicateMessageError && (await c.alreadyHandled(envelope)))) throw error;
  }
  return { outcome, released: 0 };
}

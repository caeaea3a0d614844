import { InvalidInputError } from "../base/errors.js";
import { DEFAULT_SLICE_COUNT, requireSliceCount, sliceOf } from "../core/slices.js";
import type { Envelope } from "../messaging/envelope.js";

/**
 * Integration events partitioned by slice on NATS (docs/design/event-partitions.md): an event of
 * subject `<prefix>.<source>.<type>` is published on `<prefix>.<source>.<type>.s<slice>`, the slice
 * of its producing aggregate's id (`sliceOf(envelope.aggregateId, sliceCount)`), so every event of
 * one source stream is in one slice, and a durable filtering one slice gets that stream in order.
 * The token goes last so that broker permissions on `<prefix>.<source>.>` keep holding; a filter
 * is then brought to the subjects' depth (`subjectPrefix` tokens + 2) before the slice token is
 * added, since NATS allows `>` only at the end.
 */
export interface NatsPartitions {
  /** Slices (a power of two; every worker and the journal count the same). Default `DEFAULT_SLICE_COUNT`. */
  sliceCount?: number;
  /** The relay's subject prefix (`shop`): subjects are `<prefix>.<source>.<type>`. */
  subjectPrefix: string;
}

export class SubjectSlices {
  readonly sliceCount: number;
  /** Tokens of a logical subject. */
  private readonly depth: number;

  constructor(private readonly o: NatsPartitions) {
    this.sliceCount = requireSliceCount(o.sliceCount ?? DEFAULT_SLICE_COUNT);
    if (!o.subjectPrefix || /[*>\s]/.test(o.subjectPrefix) || o.subjectPrefix.split(".").some((t) => t === "")) {
      throw new InvalidInputError(`NATS partitions need a subject prefix of plain tokens, got "${o.subjectPrefix}"`);
    }
    this.depth = o.subjectPrefix.split(".").length + 2;
  }

  /** The wire subject of an event published on `subject`. */
  publishSubject(envelope: Pick<Envelope, "aggregateId">, subject: string): string {
    if (subject.split(".").length !== this.depth || !subject.startsWith(`${this.o.subjectPrefix}.`)) {
      throw new InvalidInputError(
        `subject "${subject}" is not <prefix>.<source>.<type> under "${this.o.subjectPrefix}": a partitioned NATS transport appends the slice to such subjects only`,
      );
    }
    return `${subject}.s${sliceOf(envelope.aggregateId, this.sliceCount)}`;
  }

  /** The subject a subscriber sees: the wire subject without its slice token. */
  logicalSubject(wire: string): string {
    const dot = wire.lastIndexOf(".");
    return /^s\d+$/.test(wire.slice(dot + 1)) ? wire.slice(0, dot) : wire;
  }

  /**
   * A subscriber's filter for one slice (or every slice, `"*"`): the pattern brought to the
   * subjects' depth (a trailing `>` becomes as many `*` as it stands for), then the slice token.
   */
  filter(pattern: string, slice: number | "*"): string {
    return `${this.unsliced(pattern)}.${slice === "*" ? "*" : `s${slice}`}`;
  }

  /**
   * The pattern brought to the subjects' depth, without the slice token: what it matches is what a
   * publisher that does not partition writes, and no partitioned durable reads.
   */
  unsliced(pattern: string): string {
    const tokens = pattern.split(".");
    const last = tokens.length - 1;
    if (tokens[last] === ">") {
      if (last >= this.depth) return this.refuse(pattern);
      tokens.splice(last, 1, ...Array.from({ length: this.depth - last }, () => "*"));
    } else if (tokens.length !== this.depth) {
      return this.refuse(pattern);
    }
    return tokens.join(".");
  }

  private refuse(pattern: string): never {
    throw new InvalidInputError(
      `subject filter "${pattern}" matches no subject <prefix>.<source>.<type> under "${this.o.subjectPrefix}" (${this.depth} tokens)`,
    );
  }
}

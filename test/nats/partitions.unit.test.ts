import { describe, expect, it } from "vitest";
import { sliceOf } from "../../src/core/slices.js";
import { SubjectSlices } from "../../src/nats/partitions.js";
import { deliveryCount, durableOfAck } from "../../src/nats/slice-pull.js";

describe("NATS subjects partitioned by slice", () => {
  const slices = new SubjectSlices({ sliceCount: 16, subjectPrefix: "acme.shop" });

  it("appends the slice of the producing aggregate to <prefix>.<source>.<type>, and takes it off for subscribers", () => {
    const wire = slices.publishSubject({ aggregateId: "42" }, "acme.shop.payment.Paid");
    expect(wire).toBe(`acme.shop.payment.Paid.s${sliceOf("42", 16)}`);
    expect(slices.logicalSubject(wire)).toBe("acme.shop.payment.Paid");
    expect(() => slices.publishSubject({ aggregateId: "42" }, "acme.shop.payment")).toThrow(
      /not <prefix>.<source>.<type>/,
    );
    expect(() => slices.publishSubject({ aggregateId: "42" }, "other.shop.payment.Paid")).toThrow(/under "acme.shop"/);
  });

  it("brings a filter to the subjects' depth before the slice token (NATS takes > only at the end)", () => {
    expect(slices.filter("acme.shop.>", 3)).toBe("acme.shop.*.*.s3");
    expect(slices.filter("acme.>", 3)).toBe("acme.*.*.*.s3");
    expect(slices.filter(">", "*")).toBe("*.*.*.*.*");
    expect(slices.filter("acme.shop.payment.*", 0)).toBe("acme.shop.payment.*.s0");
    expect(() => slices.filter("acme.shop.payment", 0)).toThrow(/matches no subject/);
    expect(() => slices.filter("acme.shop.payment.Paid.>", 0)).toThrow(/matches no subject/);
    expect(() => new SubjectSlices({ subjectPrefix: "shop.>" })).toThrow(/plain tokens/);
    expect(() => new SubjectSlices({ subjectPrefix: "shop", sliceCount: 3 })).toThrow(/power of two/);
  });

  it("reads the durable and the delivery count of both ack subject formats", () => {
    expect(durableOfAck("$JS.ACK.S.c-s3.2.10.4.1700000000.0")).toBe("c-s3");
    expect(deliveryCount("$JS.ACK.S.c-s3.2.10.4.1700000000.0")).toBe(2);
    expect(durableOfAck("$JS.ACK.dom.hash.S.c-s3.5.10.4.1700000000.0.tok")).toBe("c-s3");
    expect(deliveryCount("$JS.ACK.dom.hash.S.c-s3.5.10.4.1700000000.0.tok")).toBe(5);
  });
});

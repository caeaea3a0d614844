import { describe, expect, it } from "vitest";
import { CommandRejectedError, InvalidInputError } from "../../src/base/errors.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { given } from "../../src/testing/decider-spec.js";
import { counter } from "./fixtures/counter.js";

describe("given/when/then", () => {
  it("passes when decide returns the expected events", () => {
    const decision = given(counter, [{ type: "Added", amount: 1 }])
      .when({ type: "Add", amount: 2 })
      .then([{ type: "Added", amount: 2 }]);
    expect(decision.reply).toBe(3);
  });

  it("fails when the events differ", () => {
    expect(() =>
      given(counter, [])
        .when({ type: "Add", amount: 2 })
        .then([{ type: "Added", amount: 3 }]),
    ).toThrow(/expected events/);
  });

  it("thenNothingHappened fails when decide asks for an effect", () => {
    const notified = given(counter, [{ type: "NotifyRequested", key: "k" }]);
    expect(() => notified.when({ type: "Notify" }).thenNothingHappened()).toThrow(/expected nothing/);
    given(counter, [])
      .when({ type: "Resume" })
      .then([{ type: "Added", amount: 0 }]);
  });

  it("thenThrows checks the error class and message", () => {
    given(counter, []).when({ type: "Boom" }).thenThrows(CommandRejectedError, /boom/);
    expect(() => given(counter, []).when({ type: "Boom" }).thenThrows(InvalidInputError)).toThrow(
      /expected decide to throw/,
    );
    expect(() => given(counter, []).when({ type: "Add", amount: 1 }).thenThrows(CommandRejectedError)).toThrow(
      /no error/,
    );
  });
});

describe("SimulatedClock", () => {
  it("wakes sleepers in deadline order and refuses to go backwards", async () => {
    const clock = new SimulatedClock(1000);
    const woke: number[] = [];
    const a = clock.sleep(50).then(() => woke.push(50));
    const b = clock.sleep(10).then(() => woke.push(10));
    expect(clock.nextDeadline()).toBe(1010);
    clock.advance(100);
    await Promise.all([a, b]);
    expect(woke).toEqual([10, 50]);
    expect(() => clock.set(500)).toThrow(RangeError);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });

  it("an aborted sleep rejects and never wakes", async () => {
    const clock = new SimulatedClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(10, controller.signal);
    controller.abort(new Error("stop"));
    await expect(sleeping).rejects.toThrow("stop");
    expect(clock.nextDeadline()).toBeUndefined();
  });
});

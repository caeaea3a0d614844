import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { registerReconcileCommands } from "../../src/cli/reconcile.js";
import { Runtime } from "../../src/core/runtime.js";
import { defineEffect } from "../../src/effects/define-effect.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { Reconciliation } from "../../src/effects/reconciliation.js";
import { type EffectHandler, succeeded } from "../../src/effects/types.js";
import { getEffect } from "../../src/effects/view.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { chargeProvider, receipt, renewalActor } from "./fixtures/typed-actor.js";
import { World } from "./fixtures/world.js";

type Heard = {
  type: string;
  kind: string;
  key: string;
  input: unknown;
  via?: string;
  result?: unknown;
  error?: string;
};

async function start(mode: Parameters<typeof chargeProvider>[0], amount = 50) {
  const provider = chargeProvider(mode);
  // The declared effects are the dispatcher's handlers, as they are.
  const w = new World(memoryJournal(), [renewalActor], [provider.effect, provider.mails]);
  await w.node.runtime.send("renewal/r1", { type: "Renew", customer: "ann", amount });
  const heard = async () =>
    (await w.journal.readStream("renewal/r1"))
      .filter((e) => e.type === "Heard")
      .map((e) => (e.data as { outcome: Heard }).outcome);
  return { w, provider, heard };
}

const chargeKey = "renewal:r1:charge";
const chargeInput = { customer: "ann", amount: 50 };

describe("defineEffect: outcomes carry the effect's input", () => {
  it("on run: the succeeded outcome has the input and the typed result; the next effect is built from them", async () => {
    const { w, heard } = await start({ run: "ok" });
    await w.drain();
    expect(await heard()).toEqual([
      expect.objectContaining({
        type: "oncely.effect.succeeded",
        kind: "charge",
        key: chargeKey,
        via: "run",
        input: chargeInput,
        result: { chargeId: "ch_ann" },
      }),
      expect.objectContaining({
        type: "oncely.effect.succeeded",
        kind: "receipt",
        input: { to: "ann@example.com", chargeId: "ch_ann" },
        result: { sent: "ann@example.com" },
      }),
    ]);
  });

  it("on a definite failure from run", async () => {
    const { w, heard } = await start({ run: "ok" }, 5_000);
    await w.drain();
    expect(await heard()).toEqual([
      expect.objectContaining({
        type: "oncely.effect.failed",
        error: "declined",
        input: { ...chargeInput, amount: 5_000 },
      }),
    ]);
  });

  it("on unknown and on lookup", async () => {
    const { w, heard } = await start({ run: "throw", lookup: "ok" });
    await w.drain();
    expect((await heard()).slice(0, 2)).toEqual([
      expect.objectContaining({ type: "oncely.effect.unknown", input: chargeInput }),
      expect.objectContaining({
        type: "oncely.effect.succeeded",
        via: "lookup",
        input: chargeInput,
        result: { chargeId: `looked-up:${chargeKey}` },
      }),
    ]);
  });

  it("on needs-reconciliation and on an operator's settlement", async () => {
    const { w, heard } = await start({ run: "throw", lookup: "none" });
    await w.drain();
    expect((await heard()).map((o) => [o.type, o.input])).toEqual([
      ["oncely.effect.unknown", chargeInput],
      ["oncely.effect.needs-reconciliation", chargeInput],
    ]);
    const queue = new Reconciliation({ journal: w.journal, clock: w.clock });
    await queue.settle(chargeKey, { outcome: "succeeded", result: { chargeId: "ch_manual" }, by: "ops" });
    await w.drain();
    expect((await heard())[2]).toEqual(
      expect.objectContaining({
        type: "oncely.effect.succeeded",
        via: "operator",
        settledBy: "ops",
        input: chargeInput,
        result: { chargeId: "ch_manual" },
      }),
    );
  });
});

describe("defineEffect: an operator's settlement through the CLI", () => {
  it("reaches the owner typed, with the input, and a result the schema refuses is refused", async () => {
    const { w, heard } = await start({ run: "throw", lookup: "none" });
    await w.drain();
    const settle = async (result: string) => {
      const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      registerReconcileCommands(program, async () => w.journal, { out: () => {} });
      await program.parseAsync([
        "node",
        "oncely",
        "reconcile",
        "settle",
        chargeKey,
        "--succeeded",
        "--result",
        result,
        "--by",
        "carol",
      ]);
      await w.drain();
    };
    await settle('{"chargeId":""}');
    expect((await heard()).map((o) => o.type)).toEqual(["oncely.effect.unknown", "oncely.effect.needs-reconciliation"]);
    await settle('{"chargeId":"ch_cli"}');
    expect((await heard())[2]).toEqual(
      expect.objectContaining({
        via: "operator",
        settledBy: "carol",
        input: chargeInput,
        result: { chargeId: "ch_cli" },
      }),
    );
  });
});

describe("defineEffect: the boundary checks", () => {
  it("an input its schema refuses is never run: a terminal failure naming the kind and the path", async () => {
    const { w, provider, heard } = await start({ run: "ok" }, -3);
    await w.drain();
    expect(provider.calls).toEqual([]);
    const [outcome] = await heard();
    expect(outcome?.type).toBe("oncely.effect.failed");
    expect(outcome?.error).toBe(
      'effect "renewal:r1:charge" of kind "charge" not run: InvalidInputError: invalid input of effect "charge": ' +
        "amount: Too small: expected number to be >0",
    );
    expect((await getEffect(w.journal, chargeKey))?.status).toBe("Failed");
  });

  it("a result its schema refuses is ambiguous (the provider may have acted), never handed to the owner", async () => {
    const { w, heard } = await start({ run: "bad-result" });
    await w.node.dispatcher.runOnce();
    const [outcome] = await heard();
    expect(outcome?.type).toBe("oncely.effect.unknown");
    expect(outcome?.error).toMatch(/unreadable result of kind "charge": .*chargeId/);
  });

  it("an operator's result its schema refuses goes back to the queue with the reason", async () => {
    const { w, heard } = await start({ run: "throw", lookup: "none" });
    await w.drain();
    const queue = new Reconciliation({ journal: w.journal, clock: w.clock });
    await queue.settle(chargeKey, { outcome: "succeeded", result: { id: "wrong-field" }, by: "ops" });
    await w.drain();
    expect((await heard()).map((o) => o.type)).toEqual(["oncely.effect.unknown", "oncely.effect.needs-reconciliation"]);
    const [item] = await queue.list();
    expect(item?.key).toBe(chargeKey);
    expect(item?.lastError).toMatch(/operator's settlement refused: unreadable result of kind "charge".*chargeId/);
    await queue.settle(chargeKey, { outcome: "succeeded", result: { chargeId: "ch_fixed" }, by: "ops" });
    await w.drain();
    expect((await heard())[2]).toEqual(expect.objectContaining({ via: "operator", result: { chargeId: "ch_fixed" } }));
  });

  it("request builds data only: no validation, no I/O, the notBefore timer when given", () => {
    const { effect } = chargeProvider({ run: "ok" });
    expect(effect.request("k", { customer: "", amount: -1 })).toEqual({
      kind: "charge",
      key: "k",
      input: { customer: "", amount: -1 },
    });
    expect(effect.request("k", chargeInput, { notBefore: 9 })).toEqual({
      kind: "charge",
      key: "k",
      input: chargeInput,
      notBefore: 9,
    });
  });

  it("a dispatcher refuses a declared effect that was never implemented, naming the kind", () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [renewalActor] });
    const declaredOnly = receipt as unknown as EffectHandler;
    expect(() => new Dispatcher({ journal, runtime, owner: "d", handlers: [declaredOnly] })).toThrow(
      /the handler for effect kind "receipt" has no run/,
    );
    runtime.close();
  });

  it("a parse function works as a schema; what it throws is named", () => {
    const mail = defineEffect({
      kind: "mail",
      input: (raw: unknown) => {
        if (typeof raw !== "string") throw new Error("expected an address");
        return raw;
      },
      run: async (to) => succeeded(to.length),
    });
    expect(mail.parseInput("a@b")).toBe("a@b");
    expect(() => mail.parseInput(3)).toThrow(InvalidInputError);
    expect(() => mail.parseInput(3)).toThrow(/invalid input of effect "mail": expected an address/);
    expect(() => defineEffect({ kind: "" })).toThrow(/needs a kind/);
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportedNames, exportedNamesOf, summarize } from "../../scripts/exported-names.js";

/**
 * The root entry's surface, by group, as src/index.ts lists it. A name added to (or dropped from) the
 * root fails here until it is added to its group below: a deliberate change to the public surface,
 * never a leak through a re-export. Plumbing goes to `oncely/advanced`, fault tooling to `oncely/testing`.
 */
const SURFACE: Record<string, string[]> = {
  "Actors & decisions": [
    "ActorDefinition",
    "Address",
    "AnyActor",
    "DeadlineRequest",
    "DecideContext",
    "Decider",
    "Decision",
    "EffectOutcome",
    "EffectOutcomeOf",
    "EffectRequest",
    "EffectType",
    "EventSchemas",
    "FailureBuilder",
    "FailureContext",
    "FlowActor",
    "FlowBuilder",
    "FlowEvent",
    "FlowOptions",
    "FlowState",
    "FlowStatus",
    "MessageOutcome",
    "MessageRequest",
    "OutcomeOf",
    "OutcomesOf",
    "PublishRequest",
    "PublishStep",
    "RoutedOutcome",
    "SchemaOf",
    "Schemas",
    "SnapshotPolicy",
    "StepContext",
    "TimerFired",
    "Typed",
    "UpcastStep",
    "deadline",
    "defineActor",
    "flow",
    "formatAddress",
    "isStorableText",
    "parseAddress",
    "storableText",
    "unstorableReason",
    "upcast",
  ],
  Effects: [
    "Backoff",
    "CommandSink",
    "DeclaredEffect",
    "DefiniteResult",
    "Dispatcher",
    "DispatcherJournal",
    "DispatcherOptions",
    "DispatcherStats",
    "Effect",
    "EffectFilter",
    "EffectHandler",
    "EffectImplementation",
    "EffectLookup",
    "EffectPolicy",
    "EffectSpec",
    "EffectStatus",
    "EffectView",
    "IdempotentOperations",
    "IdempotentOperationsOptions",
    "LookupContext",
    "LookupResult",
    "MatchedLookup",
    "MemoryOperationStore",
    "MessageRetryPolicy",
    "NotPerformed",
    "OperationOutcome",
    "OperationRecord",
    "OperationStore",
    "Parser",
    "Reconciliation",
    "ReconciliationItem",
    "ReconciliationJournal",
    "Retry",
    "RunContext",
    "RunResult",
    "SchemaLike",
    "Settlement",
    "defineEffect",
    "effectStatusAfter",
    "effectView",
    "failed",
    "getEffect",
    "isFinalStatus",
    "listEffects",
    "lookupMatching",
    "memoryOperationStore",
    "notFound",
    "notPerformed",
    "settlementSchema",
    "succeeded",
  ],
  Host: [
    "ActorHandle",
    "CliConsumers",
    "Clock",
    "CommandsOf",
    "Host",
    "HostConsumer",
    "HostOptions",
    "HostOwnership",
    "HostPeers",
    "HostRetention",
    "IdGenerator",
    "OncelyCliOptions",
    "Random",
    "Runtime",
    "RuntimeJournal",
    "RuntimeOptions",
    "SendOptions",
    "SendResult",
    "SettledEffect",
    "StateOf",
    "WaitOptions",
    "createHost",
    "createOncelyCli",
    "openJournal",
    "randomIds",
    "runOncelyCli",
    "systemClock",
    "systemRandom",
  ],
  "Messaging and integration events": [
    "Advance",
    "CommandHandler",
    "CommandTarget",
    "Consumer",
    "ConsumerHandler",
    "ConsumerJournal",
    "ConsumerOptions",
    "DeadLetterPayload",
    "DeadLetters",
    "Delivery",
    "DeliveryHandler",
    "DeliveryOutcome",
    "Envelope",
    "GAP_ALERTS",
    "GapAlert",
    "GapDecision",
    "GapInfo",
    "GapOperator",
    "GapStatus",
    "HandleOutcome",
    "HandleResult",
    "InProcessTransport",
    "InProcessTransportOptions",
    "InboxRetention",
    "InboxRetentionOptions",
    "JournalTransport",
    "JournalTransportJournal",
    "JournalTransportOptions",
    "Keyring",
    "MIN_SECRET_BYTES",
    "Monotonic",
    "OrderingMode",
    "OutboxRetention",
    "OutboxRetentionOptions",
    "ParkedGap",
    "ProcessEventCommand",
    "ProcessManager",
    "ProcessManagerDefinition",
    "ProcessReaction",
    "ProjectTools",
    "Projection",
    "ProjectionDefinition",
    "ProjectionHandler",
    "PublishedRetention",
    "PublishedRetentionOptions",
    "RebuildOptions",
    "ReconcileHook",
    "RejectionReason",
    "Relay",
    "RelayJournal",
    "RelayOptions",
    "ReplayResult",
    "RoutedTransport",
    "RoutedTransportOptions",
    "Signer",
    "SigningKey",
    "SkippedGap",
    "SubscribeOptions",
    "Subscription",
    "SuppliedGapEvent",
    "Transport",
    "Verifier",
    "VerifierOptions",
    "defineProcessManager",
    "defineProjection",
    "derived",
    "eventsFromOutbox",
    "isGapResolved",
    "keyring",
    "listGaps",
    "monotonic",
    "rebuildProjection",
    "retireConsumer",
    "signerFor",
    "skipGap",
    "subjectFor",
    "supplyGapEvent",
    "verifierFor",
  ],
  "Journal (types only)": [
    "CheckpointRecord",
    "CheckpointWrite",
    "ClaimOptions",
    "Commit",
    "CommitResult",
    "ConsumerState",
    "ConsumerStateReader",
    "ConsumerStateWrites",
    "DeadLetterFilter",
    "DeadLetterReader",
    "DeadLetterRecord",
    "DeadLetterStore",
    "DeadLetterWrites",
    "DocumentReader",
    "DocumentRecord",
    "DocumentWrites",
    "EventReader",
    "EventRecord",
    "EventStore",
    "ForgottenConsumer",
    "InboxEntry",
    "InboxReader",
    "InboxRecord",
    "InboxStore",
    "InboxWrite",
    "Journal",
    "JournalAdmin",
    "JournalReader",
    "JournalSummary",
    "NewDeadLetter",
    "NewEvent",
    "NewOutboxRow",
    "NewPublished",
    "OutboxCategory",
    "OutboxDone",
    "OutboxFilter",
    "OutboxReader",
    "OutboxRow",
    "OutboxStatus",
    "OutboxStore",
    "OutboxUpdate",
    "OutboxWrites",
    "ParkedRecord",
    "PublishedLog",
    "PublishedLogReader",
    "PublishedRecord",
    "SnapshotRecord",
    "SnapshotTail",
    "StreamVersion",
    "StreamWrites",
  ],
  Ownership: [
    "CommandRouter",
    "CommandRouterOptions",
    "Ownership",
    "RoutedResult",
    "RouterPeers",
    "SliceLeaseManager",
    "SliceLeaseOptions",
    "ownsEverything",
  ],
  Observability: [
    "ConsumerLag",
    "Logger",
    "MessagingMetrics",
    "ObserveConsumerLagOptions",
    "ObserveJournalOptions",
    "ObservedJournal",
    "PendingCount",
    "SPAN_ATTRIBUTES",
    "TraceCarrier",
    "consumerLag",
    "messagingMetrics",
    "observeConsumerLag",
    "observeJournal",
    "silentLogger",
  ],
  Errors: ["CommandRejectedError", "InvalidInputError", "RetryableError", "TerminalError", "errors"],
};

const repo = join(import.meta.dirname, "../..");
const entry = join(repo, "src/index.ts");
const source = readFileSync(entry, "utf8");

/** Each `// ==== Group ====` section of src/index.ts and the names it exports. */
function sections(): Record<string, string[]> {
  const parts = source.split(/^\/\/ =+ (.+?) =+$/m);
  const found: Record<string, string[]> = {};
  expect([...exportedNamesOf(parts[0] ?? "", entry).keys()], "names exported before the first group").toEqual([]);
  for (let i = 1; i < parts.length; i += 2) {
    found[parts[i] as string] = [...exportedNamesOf(parts[i + 1] ?? "", entry).keys()].sort();
  }
  return found;
}

describe("the root entry (oncely)", () => {
  it("re-exports nothing wholesale: every name is listed, but the errors namespace", () => {
    const wholesale = source.match(/^export\s+(type\s+)?\*(?!\s+as\s+errors\s+from\s+"\.\/errors\.js").*$/gm);
    expect(wholesale).toBeNull();
  });

  it("exports exactly the names of its groups, each in one group", () => {
    expect(sections()).toEqual(SURFACE);
    const all = Object.values(SURFACE).flat();
    expect(new Set(all).size).toBe(all.length);
  });

  it("exports at run time exactly the values its listing declares", async () => {
    const runtime = Object.keys(await import("../../src/index.js")).sort();
    expect(runtime).toEqual(summarize(exportedNames(entry)).values);
  });

  it("leaves plumbing to oncely/advanced and fault tooling to oncely/testing", async () => {
    const root = exportedNames(entry);
    const advanced = exportedNames(join(repo, "src/advanced.ts"));
    const testing = exportedNames(join(repo, "src/testing/index.ts"));
    expect([...advanced.keys()].filter((name) => root.has(name))).toEqual([]);
    for (const name of ["perRegistry", "subjectToken", "requestHash", "resolvePolicy", "canonicalJson", "sliceOf"]) {
      expect(root.has(name), name).toBe(false);
    }
    for (const name of ["FAULT_POINTS", "ArmableFaults", "faultsFromEnv", "noFaults", "InProcessFaultKnobs"]) {
      expect(root.has(name), name).toBe(false);
      expect(testing.has(name), name).toBe(true);
    }
    expect(Object.keys(await import("../../src/advanced.js")).sort()).toEqual(summarize(advanced).values);
  });
});

describe("the errors namespace", () => {
  it("lists every error class of the root's modules, each a subclass of OncelyError", async () => {
    const { errors } = await import("../../src/index.js");
    const { OncelyError } = errors;
    const listed = Object.entries(errors).filter(([name]) => name !== "isRetryable");
    for (const [name, value] of listed) {
      expect(
        typeof value === "function" && (value === OncelyError || value.prototype instanceof OncelyError),
        name,
      ).toBe(true);
    }
    // Every error class declared under src/, but the back ends', the console's and the fault tooling's.
    const elsewhere = ["src/nats/", "src/postgres/", "src/sqlite/", "src/console/", "src/testing/"];
    const declared = readdirSync(join(repo, "src"), { recursive: true, encoding: "utf8" })
      .map((file) => `src/${file}`)
      .filter((file) => file.endsWith(".ts") && !elsewhere.some((dir) => file.startsWith(dir)))
      .flatMap((file) => [
        ...readFileSync(join(repo, file), "utf8").matchAll(/^export (?:abstract )?class (\w+Error) /gm),
      ])
      .map((match) => match[1]);
    expect(listed.map(([name]) => name).sort()).toEqual([...new Set(declared)].sort());
  });
});

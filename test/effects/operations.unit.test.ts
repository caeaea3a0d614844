import { memoryOperationStore } from "../../src/effects/operations/memory.js";
import { operationsSuite } from "./scenarios/operations-suite.js";

operationsSuite({ name: "memory", skip: "", create: async () => memoryOperationStore(), teardown: async () => {} });

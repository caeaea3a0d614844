import { memoryFactory } from "./fixtures/journals.js";
import { protocolSuite } from "./scenarios/protocol.js";

protocolSuite(memoryFactory());

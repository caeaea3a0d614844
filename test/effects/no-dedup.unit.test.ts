import { memoryFactory } from "./fixtures/journals.js";
import { noDedupSuite } from "./scenarios/no-dedup.js";

noDedupSuite(memoryFactory());

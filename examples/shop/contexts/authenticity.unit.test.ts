import { memoryJournal } from "oncely/testing";
import { authenticitySuite } from "./authenticity-suite.js";

authenticitySuite("memory", async () => ({ journal: memoryJournal(), cleanup: async () => {} }));

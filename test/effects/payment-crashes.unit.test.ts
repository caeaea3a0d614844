import { memoryFactory } from "./fixtures/journals.js";
import { paymentCrashSuite } from "./scenarios/payment-crashes.js";

paymentCrashSuite(memoryFactory());

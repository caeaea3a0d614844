import { postgresFactory, sqliteFactory } from "./fixtures/journals.js";
import { paymentCrashSuite } from "./scenarios/payment-crashes.js";

paymentCrashSuite(await sqliteFactory());
paymentCrashSuite(await postgresFactory("effects_payment_crashes"));

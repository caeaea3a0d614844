import { postgresFactory, sqliteFactory } from "./fixtures/journals.js";
import { noDedupSuite } from "./scenarios/no-dedup.js";

noDedupSuite(await sqliteFactory());
noDedupSuite(await postgresFactory("effects_no_dedup"));

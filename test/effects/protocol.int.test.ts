import { postgresFactory, sqliteFactory } from "./fixtures/journals.js";
import { protocolSuite } from "./scenarios/protocol.js";

protocolSuite(await sqliteFactory());
protocolSuite(await postgresFactory("effects_protocol"));

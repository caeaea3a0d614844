import type { SentEmail } from "../providers/email/server.js";
import type { Refund } from "../providers/payment/refunds.js";
import type { Charge, Decline } from "../providers/payment/server.js";
import type {
  Picklist,
  PicklistCancellation,
  Shipment,
  Shortage,
  Stockout,
  WebhookAttempt,
} from "../providers/warehouse/server.js";

/** What the providers say they did: their ledgers, read over `GET /ledger`, the audit's ground truth. */
export interface Ledgers {
  payment: { charges: Charge[]; declines: Decline[]; refunds: Refund[] };
  email: { emails: SentEmail[] };
  warehouse: {
    picklists: Picklist[];
    shipments: Shipment[];
    webhooks: WebhookAttempt[];
    stockouts: Stockout[];
    cancellations: PicklistCancellation[];
    shortages: Shortage[];
  };
}

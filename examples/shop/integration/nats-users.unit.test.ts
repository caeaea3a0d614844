import { describe, expect, it } from "vitest";
import { loadShopEnv } from "../config.js";
import { NATS_USERS, natsAuthorization, publishAllowed } from "./nats-users.js";

const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, `secret-of-${u}`]));

describe("NATS users of the shop", () => {
  it("each context may publish only on its own subjects (and JetStream's); views on none", () => {
    expect(publishAllowed("payment")).toEqual(["shop.payment.>", "$JS.API.>", "$JS.ACK.>"]);
    expect(publishAllowed("views").some((s) => s.startsWith("shop."))).toBe(false);
    const config = natsAuthorization(passwords as never);
    for (const user of NATS_USERS) expect(config).toContain(`{ user: "${user}", password: "secret-of-${user}",`);
    expect(config.match(/"shop\.[a-z]+\.>"/g)).toEqual([
      '"shop.ordering.>"',
      '"shop.payment.>"',
      '"shop.shipping.>"',
      '"shop.fulfillment.>"',
    ]);
  });

  it("NATS_PASSWORDS needs a password for every user, and is never echoed", () => {
    expect(loadShopEnv({ NATS_PASSWORDS: JSON.stringify(passwords) }).NATS_PASSWORDS).toEqual(passwords);
    const { views: _views, ...partial } = passwords;
    const message = (() => {
      try {
        loadShopEnv({ NATS_PASSWORDS: JSON.stringify(partial) });
        return "accepted";
      } catch (error) {
        return String(error);
      }
    })();
    expect(message).toMatch(/NATS_PASSWORDS: views: /);
    expect(message).not.toContain("secret-of");
  });
});

import { html } from "./html.js";
import type { ConsoleView } from "./options.js";

const PAGES = [
  ["effects", "Effects"],
  ["reconciliation", "Reconciliation"],
  ["dead-letters", "Dead letters"],
  ["parked", "Parked & gaps"],
  ["lag", "Consumer lag"],
  ["ownership", "Ownership"],
  ["timeline", "Timeline"],
  ["audit", "Operator actions"],
] as const;

/**
 * The page every console URL answers with. It holds no data (it is served without the token):
 * the script signs in, then fetches the view the URL names from `/api/view/...` with the token.
 */
export function shellPage(ctx: ConsoleView): string {
  return html`<!doctype html>
<html lang="en" data-prefix="${ctx.prefix}" data-poll="${ctx.pollMs}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>oncely console</title>
<link rel="stylesheet" href="${ctx.prefix}/assets/console.css">
<script src="${ctx.prefix}/assets/console.js" defer></script></head>
<body>
<header><strong>oncely console</strong>
<nav>${PAGES.map(([path, title]) => html`<a data-nav href="${ctx.prefix}/${path}">${title}</a>`)}</nav>
<span id="live"></span><button id="logout" type="button">Sign out</button></header>
<div id="flash" role="status"></div>
<section id="login" hidden><h1>Sign in</h1>
<form id="login-form">
<label>Admin token <input type="password" name="token" required autocomplete="off"></label>
<label>Your name (recorded with every action) <input name="operator" required></label>
<button>Sign in</button><p class="message"></p></form>
<p class="summary">The token stays in this browser tab and is sent as an Authorization header; no cookie is set.</p></section>
<main id="view"></main>
</body></html>`.text;
}

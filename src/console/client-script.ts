/**
 * The console's only JavaScript, served as a file (the page's Content-Security-Policy allows no
 * inline script). It keeps the token in this tab's sessionStorage and sends it as
 * `Authorization: Bearer` on every request: the browser never attaches it by itself, so another
 * site cannot make an operator's browser settle, replay or discard anything (no cookie exists to
 * ride). Pages come from the server as escaped HTML fragments; this script only fetches and
 * inserts them (replacing the parts that changed), reloads the page when the server's live feed
 * (server-sent events on `/api/live`) says its topic changed, and posts forms as JSON.
 */
export const CLIENT_SCRIPT = String.raw`(() => {
  "use strict";
  const root = document.documentElement;
  const PREFIX = root.dataset.prefix;
  const POLL_MS = Number(root.dataset.poll);
  const view = document.getElementById("view");
  const flash = document.getElementById("flash");
  const login = document.getElementById("login");
  const live = document.getElementById("live");
  const store = window.sessionStorage;
  let dirty = false;
  let lastHtml = "";

  const token = () => store.getItem("oncely.token");
  const operator = () => store.getItem("oncely.operator") || "";

  function fragmentUrl() {
    const path = location.pathname.slice(PREFIX.length).replace(/^\/+/, "") || "effects";
    return PREFIX + "/api/view/" + path + location.search;
  }

  function say(text, kind) {
    flash.textContent = text;
    flash.className = kind;
  }

  function showLogin(message) {
    login.hidden = false;
    view.hidden = true;
    login.querySelector(".message").textContent = message || "";
    login.querySelector("input[name=operator]").value = operator();
  }

  async function call(url, init) {
    const headers = Object.assign({ authorization: "Bearer " + token() }, (init && init.headers) || {});
    const response = await fetch(url, Object.assign({}, init, { headers, credentials: "omit", cache: "no-store" }));
    if (response.status === 401) {
      store.removeItem("oncely.token");
      showLogin("The token was refused: sign in again.");
      throw new Error("unauthorized");
    }
    return response;
  }

  async function errorText(response) {
    try {
      const body = await response.json();
      return body.error + (body.issues && body.issues.length ? ": " + body.issues.join("; ") : "");
    } catch (e) {
      return "HTTP " + response.status;
    }
  }

  function fillOperator() {
    for (const input of view.querySelectorAll("input[data-operator]")) if (!input.value) input.value = operator();
  }

  function markNav() {
    for (const a of document.querySelectorAll("header nav a")) {
      a.classList.toggle("active", location.pathname.startsWith(a.getAttribute("href")));
    }
  }

  function busy() {
    const active = document.activeElement;
    return dirty || (active && view.contains(active) && active.closest("form"));
  }

  async function load(force) {
    if (!token()) {
      if (login.hidden) showLogin("");
      return;
    }
    login.hidden = true;
    view.hidden = false;
    markNav();
    if (!force && busy()) return;
    try {
      const response = await call(fragmentUrl());
      if (!response.ok) {
        say(await errorText(response), "error");
        return;
      }
      const text = await response.text();
      if (text !== lastHtml) {
        lastHtml = text;
        patch(text);
        fillOperator();
      }
      live.textContent = "live, updated " + new Date().toLocaleTimeString();
      live.className = "ok";
    } catch (e) {
      if (e.message !== "unauthorized") {
        live.textContent = "offline: " + e.message;
        live.className = "down";
      }
    }
  }

  // Replace only the parts of the page that changed (an open <details>, a scroll position and
  // the rest stay as they are); a page of another shape is replaced whole.
  function patch(text) {
    const next = document.createElement("template");
    next.innerHTML = text;
    const fresh = Array.from(next.content.childNodes);
    const old = Array.from(view.childNodes);
    if (fresh.length !== old.length) {
      view.replaceChildren(...fresh);
      return;
    }
    fresh.forEach((node, i) => {
      const current = old[i];
      const same = node.nodeType === current.nodeType &&
        (node.nodeType === 1 ? node.outerHTML === current.outerHTML : node.textContent === current.textContent);
      if (!same) view.replaceChild(node, current);
    });
  }

  // The page's topic in the live feed; the timeline and operator actions follow every topic.
  function topic() {
    const path = location.pathname.slice(PREFIX.length).replace(/^\/+/, "") || "effects";
    return path.split("/")[0];
  }

  function changed(block) {
    const line = block.split("\n").find((l) => l.startsWith("data: "));
    if (!line || !block.includes("event: change")) return;
    const topics = JSON.parse(line.slice(6)).topics || [];
    const mine = topic();
    if (topics.includes(mine) || mine === "timeline" || mine === "audit") load(false);
  }

  // Server-sent events read with fetch (EventSource cannot send the Authorization header); on
  // a dropped stream the page loads once and listens again after the refresh interval.
  async function listen() {
    for (;;) {
      if (token()) {
        try {
          const response = await call(PREFIX + "/api/live");
          if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              changed(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
            }
          }
          throw new Error("live stream closed");
        } catch (e) {
          if (e.message !== "unauthorized") {
            live.textContent = "offline: " + e.message;
            live.className = "down";
          }
        }
        await load(false);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  function navigate(url) {
    history.pushState({}, "", url);
    dirty = false;
    lastHtml = "";
    say("", "");
    return load(true);
  }

  function fields(form) {
    const out = {};
    for (const [name, value] of new FormData(form)) out[name] = String(value);
    return out;
  }

  async function post(form) {
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const body = fields(form);
    if (body.by) store.setItem("oncely.operator", body.by);
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    try {
      const response = await call(form.dataset.post, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        say(await errorText(response), "error");
        return;
      }
      say((await response.json()).message, "ok");
      dirty = false;
      await load(true);
    } catch (e) {
      if (e.message !== "unauthorized") say(e.message, "error");
    } finally {
      if (button) button.disabled = false;
    }
  }

  document.addEventListener("click", (event) => {
    const a = event.target.closest("a[data-nav]");
    if (!a || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    navigate(a.href);
  });

  document.addEventListener("submit", (event) => {
    const form = event.target;
    event.preventDefault();
    if (form.id === "login-form") {
      const f = fields(form);
      store.setItem("oncely.token", f.token);
      store.setItem("oncely.operator", f.operator);
      form.reset();
      lastHtml = "";
      load(true);
    } else if (form.dataset.get !== undefined) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(fields(form))) if (value !== "") params.set(name, value);
      const search = params.toString();
      navigate(form.dataset.get + (search ? "?" + search : ""));
    } else if (form.dataset.post !== undefined) {
      post(form);
    }
  });

  view.addEventListener("input", () => {
    dirty = true;
  });

  document.getElementById("logout").addEventListener("click", () => {
    store.removeItem("oncely.token");
    showLogin("Signed out.");
  });

  window.addEventListener("popstate", () => {
    lastHtml = "";
    load(true);
  });

  load(true);
  listen();
})();
`;

// The public API of docs/api.md, and nothing else: the client is a client like any other.

import { lang, t } from "./i18n.js";

const BASE = "/api/v1";
const STORE = "mighty.session";

/**
 * The player this browser plays as, kept in localStorage: a guest ({player, name, token})
 * or an account's session ({player, name, token, refresh, expires}: the token lives
 * minutes, the refresh token gets the next one; docs/accounts.md).
 */
export const session = {
  load() {
    try { return JSON.parse(localStorage.getItem(STORE) || "null"); } catch { return null; }
  },
  save(who) { localStorage.setItem(STORE, JSON.stringify(who)); },
  clear() { localStorage.removeItem(STORE); },
  get token() { return this.load()?.token ?? null; },
  get player() { return this.load()?.player ?? null; },
  get name() { return this.load()?.name ?? null; },
  get account() { return Boolean(this.load()?.refresh); },
};

let refreshing = null;
/**
 * An account's token, refreshed first when it ends within a minute (or ``force``): one
 * refresh at a time however many calls wait for it. A session that has ended (logged out
 * elsewhere, deleted) is forgotten: the person logs in again.
 */
export async function freshToken({ force = false } = {}) {
  const who = session.load();
  if (!who?.refresh) return who?.token ?? null;
  if (!force && Date.parse(who.expires) - Date.now() > 60_000) return who.token;
  refreshing ??= (async () => {
    try {
      const answer = await fetch(`${BASE}/sessions/refresh`, {
        method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ refresh: who.refresh }),
      });
      if (answer.status === 401) { session.clear(); return null; }
      if (!answer.ok) return who.token; // the server is busy or down: the old token may still do
      const next = await answer.json();
      if (session.load()?.refresh === who.refresh) session.save(next);
      return next.token;
    } catch { return who.token; } finally { refreshing = null; }
  })();
  return refreshing;
}

/** A refusal: the API's stable code and its sentence for a person. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body, { auth = true, retried = false } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const token = auth ? await freshToken() : null;
  if (token) headers.Authorization = `Bearer ${token}`;
  let answer;
  try {
    // the reader's language (docs/api.md): labels, names and refusals come back in it
    const url = `${BASE}${path}${path.includes("?") ? "&" : "?"}lang=${lang()}`;
    answer = await fetch(url, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, "offline", t("web.error.offline"));
  }
  if (answer.status === 204) return null;
  const text = await answer.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!answer.ok) {
    const code = data?.code ?? `http_${answer.status}`;
    const message = data?.message ?? t("web.error.status", { status: answer.status });
    if (answer.status === 401 && auth && token && session.account && !retried && await freshToken({ force: true })) {
      return api(method, path, body, { auth, retried: true }); // an access token that ended: once more
    }
    if (answer.status === 401 && auth && token) session.clear(); // a forged or ended token: log in again
    throw new ApiError(answer.status, code, message);
  }
  return data;
}

export const get = (path, opts) => api("GET", path, undefined, opts);
export const post = (path, body, opts) => api("POST", path, body, opts);
export const patch = (path, body, opts) => api("PATCH", path, body, opts);

export async function login(name) {
  const who = await post("/players", { name }, { auth: false });
  session.save(who);
  keepMyLang(lang());
  return who;
}

/** The player's language setting follows the picker (docs/api.md); a failure changes nothing shown. */
export function keepMyLang(code) {
  if (session.token) patch("/players/me", { lang: code }).catch(() => {});
}

let counter = 0;
/** A command id the API accepts (1–64 of A-Za-z0-9_-), unique per browser. */
export function commandId() {
  counter += 1;
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `w-${random[0].toString(36)}${random[1].toString(36)}-${counter}`;
}

/** The last version each table acknowledged one of our commands with: a reopened stream
 * sends it as `acked=` (docs/api.md, "acked="), so a power cut between the acknowledgement
 * and its view still comes back as a view marked `rollback`. */
const ackedAt = new Map();

/** Send a command as the caller's seat; a store outage is retried with the same id. */
export async function sendCommand(table, command) {
  const id = commandId();
  for (let attempt = 0; ; attempt += 1) {
    try {
      const answer = await post(`/tables/${encodeURIComponent(table)}/commands`, { id, command });
      if (Number.isInteger(answer?.version)) ackedAt.set(table, Math.max(ackedAt.get(table) ?? 0, answer.version));
      return answer;
    } catch (error) {
      const retry = error.code === "unavailable" || error.code === "offline" || error.code === "rate_limited";
      if (!retry || attempt >= 4) throw error;
      await new Promise((r) => setTimeout(r, 300 * 2 ** attempt));
    }
  }
}

/**
 * Follow a table's view over the WebSocket stream. The last version seen is the cursor:
 * a dropped socket is opened again with ?after=<last version>, so nothing is missed and
 * nothing comes twice. `onView(view)` gets every newer view, and a view marked
 * `rollback` even when it is older (the server lost its last writes: that is the table
 * as it is now, and play goes on from it); `onLink(state)` gets "open", "closed" or
 * "retrying".
 */
export function follow(table, { after = 0, onView, onChat = () => {}, onLink = () => {}, onError = () => {} }) {
  let version = after;
  let chatAfter = null; // the last chat message id seen: a reopened stream resumes after it
  let socket = null;
  let stopped = false;
  let delay = 250;
  let timer = null;
  let pinger = null;

  async function open() {
    if (stopped) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const fresh = await freshToken(); // an account's token may have ended since the last socket
    if (stopped) return;
    const token = fresh ? `&token=${encodeURIComponent(fresh)}` : "";
    const chat = chatAfter ? `&chat_after=${encodeURIComponent(chatAfter)}` : "";
    const acked = (ackedAt.get(table) ?? 0) > version ? `&acked=${ackedAt.get(table)}` : "";
    socket = new WebSocket(`${scheme}://${location.host}${BASE}/tables/${encodeURIComponent(table)}/stream?after=${version}${acked}${token}${chat}&lang=${lang()}`);
    socket.onopen = () => {
      onLink("open");
      pinger = setInterval(() => socket?.readyState === 1 && socket.send('{"type":"ping"}'), 20000);
    };
    socket.onmessage = (message) => {
      let frame;
      try { frame = JSON.parse(message.data); } catch { return; }
      if (frame.type === "view" && (frame.version > version || frame.rollback === true)) {
        delay = 250; // the stream works: a later drop is retried soon again
        version = frame.version;
        onView(frame.view);
      } else if (frame.type === "chat") {
        chatAfter = frame.id;
        onChat(frame);
      } else if (frame.type === "error") {
        onError(new ApiError(0, frame.code, frame.message));
        stopped = true;
      }
    };
    socket.onclose = () => {
      clearInterval(pinger);
      if (stopped) { onLink("closed"); return; }
      onLink("retrying");
      // a pause that doubles while no view comes (a gateway that turns starts away as
      // "busy" closes the socket right after opening it), spread so that many clients
      // closed at once do not come back at once
      timer = setTimeout(open, delay * (0.5 + Math.random() / 2));
      delay = Math.min(delay * 2, 5000);
    };
  }
  open();
  return {
    get version() { return version; },
    /** Drop the socket as a network would (the client reconnects by itself). */
    drop() { socket?.close(); },
    close() { stopped = true; clearTimeout(timer); socket?.close(); },
  };
}

// The public API of docs/api.md, and nothing else: the client is a client like any other.

const BASE = "/api/v1";
const STORE = "mighty.session";

/** The guest player this browser plays as, kept in localStorage. */
export const session = {
  load() {
    try { return JSON.parse(localStorage.getItem(STORE) || "null"); } catch { return null; }
  },
  save(who) { localStorage.setItem(STORE, JSON.stringify(who)); },
  clear() { localStorage.removeItem(STORE); },
  get token() { return this.load()?.token ?? null; },
  get player() { return this.load()?.player ?? null; },
  get name() { return this.load()?.name ?? null; },
};

/** A refusal: the API's stable code and its sentence for a person. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body, { auth = true } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (auth && session.token) headers.Authorization = `Bearer ${session.token}`;
  let answer;
  try {
    answer = await fetch(BASE + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, "offline", "The server cannot be reached; check the connection.");
  }
  if (answer.status === 204) return null;
  const text = await answer.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!answer.ok) {
    const code = data?.code ?? `http_${answer.status}`;
    const message = data?.message ?? `The server answered ${answer.status}.`;
    if (answer.status === 401 && auth) session.clear(); // a forged or expired token: log in again
    throw new ApiError(answer.status, code, message);
  }
  return data;
}

export const get = (path, opts) => api("GET", path, undefined, opts);
export const post = (path, body, opts) => api("POST", path, body, opts);

export async function login(name) {
  const who = await post("/players", { name }, { auth: false });
  session.save(who);
  return who;
}

let counter = 0;
/** A command id the API accepts (1–64 of A-Za-z0-9_-), unique per browser. */
export function commandId() {
  counter += 1;
  const random = crypto.getRandomValues(new Uint32Array(2));
  return `w-${random[0].toString(36)}${random[1].toString(36)}-${counter}`;
}

/** Send a command as the caller's seat; a store outage is retried with the same id. */
export async function sendCommand(table, command) {
  const id = commandId();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await post(`/tables/${encodeURIComponent(table)}/commands`, { id, command });
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
 * nothing comes twice. `onView(view)` gets every newer view; `onLink(state)` gets
 * "open", "closed" or "retrying".
 */
export function follow(table, { after = 0, onView, onLink = () => {}, onError = () => {} }) {
  let version = after;
  let socket = null;
  let stopped = false;
  let delay = 250;
  let timer = null;
  let pinger = null;

  function open() {
    if (stopped) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const token = session.token ? `&token=${encodeURIComponent(session.token)}` : "";
    socket = new WebSocket(`${scheme}://${location.host}${BASE}/tables/${encodeURIComponent(table)}/stream?after=${version}${token}`);
    socket.onopen = () => {
      delay = 250;
      onLink("open");
      pinger = setInterval(() => socket?.readyState === 1 && socket.send('{"type":"ping"}'), 20000);
    };
    socket.onmessage = (message) => {
      let frame;
      try { frame = JSON.parse(message.data); } catch { return; }
      if (frame.type === "view" && frame.version > version) {
        version = frame.version;
        onView(frame.view);
      } else if (frame.type === "error") {
        onError(new ApiError(0, frame.code, frame.message));
        stopped = true;
      }
    };
    socket.onclose = () => {
      clearInterval(pinger);
      if (stopped) { onLink("closed"); return; }
      onLink("retrying");
      timer = setTimeout(open, delay);
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

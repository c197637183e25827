// The router: #/ lobby, #/t/TABLE table, #/r/TABLE/N replay, #/p/PLAYER player,
// #/rules/NAME a rules guide. Each view returns a cleanup function (or nothing).

import { session } from "./api.js";
import { clear, h } from "./dom.js";
import { showLobby } from "./lobby.js";
import { showPlayer } from "./player.js";
import { showReplay } from "./replay.js";
import { showRules } from "./rules.js";
import { showTable } from "./table.js";

const app = document.getElementById("app");
let cleanup = null;

function renderMe() {
  const me = document.getElementById("me");
  clear(me);
  if (session.player) {
    me.append(h("a", { href: `#/p/${session.player}` }, session.name), " ",
      h("button", { class: "link", onclick: () => { session.clear(); route(); } }, "log out"));
  }
}

export function route() {
  if (typeof cleanup === "function") cleanup();
  cleanup = null;
  clear(app);
  renderMe();
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query);
  window.scrollTo(0, 0);
  if (parts[0] === "t" && parts[1]) cleanup = showTable(app, parts[1]);
  else if (parts[0] === "r" && parts[1]) cleanup = showReplay(app, parts[1], Number(parts[2] || 1), params.get("as"));
  else if (parts[0] === "p" && parts[1]) cleanup = showPlayer(app, parts[1]);
  else if (parts[0] === "rules") cleanup = showRules(app, parts[1] || "mighty");
  else cleanup = showLobby(app, renderMe);
}

window.addEventListener("hashchange", route);
route();

// The router: #/ lobby, #/t/TABLE table, #/r/TABLE/N replay, #/p/PLAYER player,
// #/leaderboards/GAME a rule set's leaderboard, #/rules/NAME a rules guide, #/account the person's account, #/join/TABLE/CODE a private
// table's invite. Each view returns a cleanup function (or nothing).

import { meBar, showAccount } from "./account.js";
import { get, keepMyLang, session } from "./api.js";
import { clear, h } from "./dom.js";
import { forgetGames } from "./games.js";
import { chosenLang, keepLang, keptLang, lang, languages, loadLang, t } from "./i18n.js";
import { showInvite } from "./invite.js";
import { showLobby } from "./lobby.js";
import { showPlayer } from "./player.js";
import { showLeaderboard } from "./ratings.js";
import { showReplay } from "./replay.js";
import { showRules } from "./rules.js";
import { showTable } from "./table.js";

const app = document.getElementById("app");
let cleanup = null;

function renderMe() {
  const me = document.getElementById("me");
  clear(me);
  me.append(...meBar(route));
}

/** The static page's words (index.html marks them with data-i18n). */
function renderChrome() {
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  document.title = t("web.brand");
}

/** The language picker: the choice is kept in this browser and as the player's setting. */
async function renderPicker() {
  const holder = document.getElementById("lang");
  const list = await languages();
  const select = h("select", { name: "lang", "data-action": "lang", "aria-label": t("web.nav.language"),
    onchange: async () => {
      keepLang(select.value);
      keepMyLang(select.value);
      await loadLang(select.value);
      forgetGames(); // the games' names are in the language they were asked in
      renderChrome();
      renderPicker(); // its own label in the new language
      route();
    } },
  list.map((l) => h("option", { value: l.lang, selected: l.lang === lang() }, l.name)));
  clear(holder).append(select);
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
  else if (parts[0] === "leaderboards") showLeaderboard(app, parts[1]);
  else if (parts[0] === "account") cleanup = showAccount(app, route);
  else if (parts[0] === "join" && parts[1] && parts[2]) showInvite(app, parts[1], parts[2]);
  else if (parts[0] === "rules") cleanup = showRules(app, parts[1] || "");
  else cleanup = showLobby(app, renderMe);
}

async function start() {
  let wanted = chosenLang();
  if (!keptLang() && session.token) {
    // no choice in this browser yet: the player's own setting, if it has one
    try { wanted = (await get("/players/me")).lang ?? wanted; } catch { /* a guest's record may be gone */ }
  }
  await loadLang(wanted);
  renderChrome();
  await renderPicker();
  window.addEventListener("hashchange", route);
  route();
}

start();

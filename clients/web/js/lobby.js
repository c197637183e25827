// The lobby: log in as a guest, quick play, create a table with its rule options and
// bots, the tables (filtered by game and status) to join, watch or replay.

import { accountForms } from "./account.js";
import { ApiError, get, login, post, session } from "./api.js";
import { clear, h, toast } from "./dom.js";
import { games } from "./games.js";
import { fmtDate, t } from "./i18n.js";

// the bot levels a seat may be given (docs/bots.md)
const BOT_LEVELS = ["beginner", "random", "expert"];

function loginPanel(onDone) {
  const input = h("input", { name: "name", maxlength: 24, required: true, placeholder: t("web.login.placeholder"), autocomplete: "nickname" });
  const form = h("form", {
    class: "panel login",
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        await login(input.value.trim());
        onDone();
      } catch (error) { toast(error.message); }
    },
  }, h("h2", {}, t("web.login.title")), h("label", {}, t("web.login.name"), " ", input),
  h("button", { type: "submit", "data-action": "login", class: "primary" }, t("web.login.enter")));
  setTimeout(() => input.focus(), 0);
  return form;
}

// the catalogue's first game is chosen until the player picks another
function gameSelect(list, value = list.games[0]?.game ?? "", { any = false } = {}) {
  const select = h("select", { name: "game" },
    any ? h("option", { value: "" }, t("web.lobby.every_game")) : null,
    list.games.map((g) => h("option", { value: g.game, selected: g.game === value }, g.name)));
  return select;
}

function quickplayPanel(list) {
  const game = gameSelect(list);
  const wait = h("input", { type: "number", name: "wait_seconds", min: 0, max: 60, value: 5, size: 3 });
  const button = h("button", {
    class: "primary big", "data-action": "quickplay",
    onclick: async () => {
      button.disabled = true;
      button.textContent = t("web.quick.finding");
      try {
        const seated = await post("/quickplay", { game: game.value, wait_seconds: Number(wait.value) || 0 });
        location.hash = `#/t/${seated.table}`;
      } catch (error) {
        toast(error.message);
      } finally {
        button.disabled = false;
        button.textContent = t("web.quick.button");
      }
    },
  }, t("web.quick.button"));
  return h("section", { class: "panel quick" }, h("h2", {}, t("web.quick.title")),
    h("p", {}, t("web.quick.about")),
    h("div", { class: "row" }, h("label", {}, t("web.field.game"), " ", game),
      h("label", {}, t("web.quick.wait"), " ", wait, " ", t("web.unit.seconds")), button));
}

function createPanel(list) {
  const form = h("form", { class: "panel create" });
  const game = gameSelect(list);
  const name = h("input", { name: "name", maxlength: 80, placeholder: t("web.create.name") });
  const hands = h("input", { type: "number", name: "hands", min: 1, max: 1000, value: 10, size: 4 });
  const turn = h("input", { type: "number", name: "turn_seconds", min: 5, max: 600, value: 60, size: 4 });
  const secret = h("input", { type: "checkbox", name: "private", "data-action": "private" });
  // learners' hints: an unrated table, whose seats may ask what a bot would play (docs/api.md, "Hints")
  const hints = h("input", { type: "checkbox", name: "hints", "data-action": "hints" });
  const seatsBox = h("div", { class: "seats-setup" });
  const optionsBox = h("div", { class: "options" });

  function spec() { return list.games.find((g) => g.game === game.value); }
  function players() { return spec()?.seats ?? 5; }

  function drawSeats() {
    clear(seatsBox);
    const n = players();
    const mine = h("select", { name: "seat" }, h("option", { value: "" }, t("web.create.no_seat")),
      Array.from({ length: n }, (_, i) => h("option", { value: i, selected: i === 0 }, t("web.seat.n", { seat: i }))));
    seatsBox.append(h("label", {}, t("web.create.my_seat"), " ", mine));
    // Every seat but the creator's starts with a bot (the API's `bots` is empty unless
    // asked: this is the form's choice), so a new table can start at once; "a person"
    // leaves a seat for someone to join.
    const level = "beginner";
    const grid = h("div", { class: "bots" });
    const pick = (i) => grid.querySelector(`select[data-seat="${i}"]`);
    for (let i = 0; i < n; i += 1) {
      grid.append(h("label", {}, t("web.seat.n", { seat: i }), " ", h("select", { name: `bot-${i}`, "data-seat": i },
        h("option", { value: "", selected: i === 0 }, t("web.create.person")),
        BOT_LEVELS.map((b) => h("option", { value: b, selected: i !== 0 && b === level }, t(`web.bot.${b}`))))));
    }
    let sat = mine.value;
    mine.addEventListener("change", () => {
      if (sat !== "" && pick(sat)?.value === "") pick(sat).value = level; // the seat left: a bot again
      if (mine.value !== "") pick(mine.value).value = ""; // the creator's seat is a person's
      sat = mine.value;
    });
    seatsBox.append(grid);
  }

  function drawOptions() {
    clear(optionsBox);
    const options = spec()?.options ?? [];
    if (!options.length) {
      optionsBox.append(h("p", { class: "muted" }, t("web.create.no_options", { game: spec()?.name ?? game.value })));
      return;
    }
    for (const option of options) {
      const select = h("select", { name: `opt-${option.name}`, "data-option": option.name },
        (option.choices ?? []).map((c) => h("option", { value: JSON.stringify(c.value), selected: c.value === option.default },
          c.value === option.default ? t("web.create.default", { choice: c.label }) : c.label)));
      optionsBox.append(h("label", { title: option.name }, option.label, " ", select));
    }
  }

  game.addEventListener("change", () => { drawSeats(); drawOptions(); });
  drawSeats();
  drawOptions();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const defaults = Object.fromEntries((spec()?.options ?? []).map((o) => [o.name, o.default]));
    const options = {};
    for (const select of optionsBox.querySelectorAll("select")) {
      const value = JSON.parse(select.value);
      const option = select.dataset.option;
      if (value !== defaults[option]) options[option] = value;
    }
    const bots = {};
    for (const select of seatsBox.querySelectorAll("select[data-seat]")) {
      if (select.value) bots[select.dataset.seat] = select.value;
    }
    const seatValue = seatsBox.querySelector("select[name=seat]").value;
    const seat = seatValue === "" ? null : Number(seatValue);
    if (seat !== null && bots[seat]) delete bots[seat];
    try {
      const table = await post("/tables", {
        game: game.value, options, name: name.value.trim(), hands: Number(hands.value),
        turn_seconds: Number(turn.value), seat, bots, private: secret.checked,
        ...(hints.checked ? { hints: true, rated: false } : {}),
      });
      location.hash = `#/t/${table.table}`;
    } catch (error) { toast(error.message); }
  });
  form.append(
    h("h2", {}, t("web.create.title")),
    h("div", { class: "row" }, h("label", {}, t("web.field.game"), " ", game), name),
    h("div", { class: "row" }, h("label", {}, t("web.create.hands"), " ", hands), h("label", {}, t("web.create.turn"), " ", turn)),
    seatsBox,
    h("label", { class: "private" }, secret, " ", t("web.create.private")),
    h("label", { class: "private" }, hints, " ", t("web.create.hints")),
    h("details", {}, h("summary", {}, t("web.create.options"), " (", h("a", { href: "#/rules" }, t("web.create.rules_link")), ")"), optionsBox),
    h("button", { type: "submit", class: "primary", "data-action": "create_table" }, t("web.create.submit")),
  );
  return form;
}

function seatLabel(seat) {
  if (!seat.player) return h("span", { class: "free" }, t("web.seat.free"));
  const name = seat.name ?? "?";
  return h("a", { href: `#/p/${seat.player}`, class: seat.bot ? "bot" : "" },
    seat.bot ? t("web.seat.bot_named", { name, level: t(`web.bot.${seat.bot}`) }) : name,
    seat.away ? ` (${t("web.seat.away")})` : "");
}

async function join(table) {
  try {
    await post(`/tables/${table}/join`, {});
    location.hash = `#/t/${table}`;
  } catch (error) { toast(error.message); }
}

function tableRow(table) {
  const mine = table.seats.some((s) => s.player && s.player === session.player);
  const free = table.seats.some((s) => !s.player);
  const actions = h("div", { class: "actions" });
  if (mine) actions.append(h("a", { class: "button primary", href: `#/t/${table.table}` }, t("web.lobby.return")));
  else if (table.status === "open" && free) actions.append(h("button", { class: "primary", "data-action": "join", onclick: () => join(table.table) }, t("web.lobby.join")));
  if (!mine && table.status !== "finished") actions.append(h("a", { class: "button", href: `#/t/${table.table}`, "data-action": "spectate" }, t("web.lobby.watch")));
  if (table.hands_played > 0 || table.status === "finished") actions.append(h("a", { class: "button", href: `#/r/${table.table}/1`, "data-action": "replay" }, t("web.lobby.replays")));
  return h("li", { class: `table-row ${table.status}`, "data-table": table.table },
    h("div", { class: "what" }, h("strong", {}, table.name || table.table), " ",
      h("span", { class: "tag" }, table.game), " ", h("span", { class: `status ${table.status}` }, t(`web.status.${table.status}`)),
      h("div", { class: "muted" }, t("web.lobby.row", { played: table.hands_played, hands: table.hands, seconds: table.turn_seconds }),
        table.created ? ` · ${fmtDate(table.created)}` : "")),
    h("div", { class: "who" }, table.seats.map((s) => h("span", { class: "seat-chip" }, `${s.seat}: `, seatLabel(s)))),
    actions);
}

function tablesPanel(list) {
  const game = gameSelect(list, "", { any: true });
  const status = h("select", { name: "status" }, ["", "open", "playing", "finished"].map((s) => h("option", { value: s }, s ? t(`web.status.${s}`) : t("web.lobby.any_status"))));
  const rows = h("ul", { class: "tables" });
  async function load() {
    const query = new URLSearchParams();
    if (game.value) query.set("game", game.value);
    if (status.value) query.set("status", status.value);
    try {
      const { tables } = await get(`/tables?${query}`, { auth: false });
      clear(rows);
      tables.sort((a, b) => (b.created || "").localeCompare(a.created || ""));
      if (!tables.length) rows.append(h("li", { class: "muted" }, t("web.lobby.none")));
      for (const table of tables) rows.append(tableRow(table));
    } catch (error) {
      if (error instanceof ApiError) toast(error.message);
    }
  }
  game.addEventListener("change", load);
  status.addEventListener("change", load);
  load();
  const timer = setInterval(load, 5000);
  return [h("section", { class: "panel tables-panel" },
    h("div", { class: "row spread" }, h("h2", {}, t("web.lobby.tables")),
      h("div", { class: "filters" }, game, status, h("button", { onclick: load, title: t("web.lobby.refresh") }, "↻"))),
    rows), () => clearInterval(timer)];
}

export function showLobby(root, onLogin) {
  let stop = () => {};
  let alive = true; // left before the games arrived (another page, a new language): draw nothing
  (async () => {
    const list = await games();
    if (!alive) return;
    const enter = () => { onLogin(); clear(root); stop(); stop = draw(); };
    if (!session.token) {
      root.append(h("div", { class: "lobby" }, h("section", { class: "hero" },
        h("h1", {}, t("web.brand")), h("p", {}, t("web.hero.about"), " ",
          h("a", { href: "#/rules" }, t("web.hero.how")))),
      h("div", { class: "accounts" }, loginPanel(enter), accountForms(enter))));
      return;
    }
    stop = draw();
    function draw() {
      const [panel, stopTables] = tablesPanel(list);
      root.append(h("div", { class: "lobby" }, h("div", { class: "side" }, quickplayPanel(list), createPanel(list)), panel));
      return stopTables;
    }
  })();
  return () => { alive = false; stop(); };
}

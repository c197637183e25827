// The lobby: log in as a guest, quick play, create a table with its rule options and
// bots, the tables (filtered by game and status) to join, watch or replay.

import { ApiError, get, login, post, session } from "./api.js";
import { clear, h, toast } from "./dom.js";

let catalogue = null;
/** The rule sets and options the server knows (domain/mighty/rules.py, kept in step by a test). */
export async function games() {
  if (!catalogue) catalogue = await (await fetch("/games.json")).json();
  return catalogue;
}

function loginPanel(onDone) {
  const input = h("input", { name: "name", maxlength: 24, required: true, placeholder: "Your name", autocomplete: "nickname" });
  const form = h("form", {
    class: "panel login",
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        await login(input.value.trim());
        onDone();
      } catch (error) { toast(error.message); }
    },
  }, h("h2", {}, "Play as a guest"), h("label", {}, "Display name ", input),
  h("button", { type: "submit", "data-action": "login", class: "primary" }, "Enter"));
  setTimeout(() => input.focus(), 0);
  return form;
}

function gameSelect(list, value = "mighty-5", { any = false } = {}) {
  const select = h("select", { name: "game" },
    any ? h("option", { value: "" }, "every game") : null,
    list.games.map((g) => h("option", { value: g.name, selected: g.name === value }, `${g.name} (${g.players} players)`)));
  return select;
}

function quickplayPanel(list) {
  const game = gameSelect(list);
  const wait = h("input", { type: "number", name: "wait_seconds", min: 0, max: 60, value: 5, size: 3 });
  const button = h("button", {
    class: "primary big", "data-action": "quickplay",
    onclick: async () => {
      button.disabled = true;
      button.textContent = "Finding a table…";
      try {
        const seated = await post("/quickplay", { game: game.value, wait_seconds: Number(wait.value) || 0 });
        location.hash = `#/t/${seated.table}`;
      } catch (error) {
        toast(error.message);
      } finally {
        button.disabled = false;
        button.textContent = "Quick play";
      }
    },
  }, "Quick play");
  return h("section", { class: "panel quick" }, h("h2", {}, "Quick play"),
    h("p", {}, "Sit down with whoever is waiting for the same game; free seats get bots."),
    h("div", { class: "row" }, h("label", {}, "Game ", game),
      h("label", {}, "Wait ", wait, " s"), button));
}

function createPanel(list) {
  const form = h("form", { class: "panel create" });
  const game = gameSelect(list);
  const name = h("input", { name: "name", maxlength: 80, placeholder: "Table name (optional)" });
  const hands = h("input", { type: "number", name: "hands", min: 1, max: 1000, value: 10, size: 4 });
  const turn = h("input", { type: "number", name: "turn_seconds", min: 5, max: 600, value: 60, size: 4 });
  const seatsBox = h("div", { class: "seats-setup" });
  const optionsBox = h("div", { class: "options" });

  function players() { return list.games.find((g) => g.name === game.value)?.players ?? 5; }

  function drawSeats() {
    clear(seatsBox);
    const n = players();
    const mine = h("select", { name: "seat" }, h("option", { value: "" }, "no seat (watch)"),
      Array.from({ length: n }, (_, i) => h("option", { value: i, selected: i === 0 }, `seat ${i}`)));
    seatsBox.append(h("label", {}, "I sit at ", mine));
    const grid = h("div", { class: "bots" });
    for (let i = 0; i < n; i += 1) {
      grid.append(h("label", {}, `Seat ${i} `, h("select", { name: `bot-${i}`, "data-seat": i },
        h("option", { value: "" }, "a person"),
        list.bots.map((level) => h("option", { value: level }, `${level} bot`)))));
    }
    seatsBox.append(grid);
  }

  function drawOptions() {
    clear(optionsBox);
    if (game.value === "mitigati") {
      optionsBox.append(h("p", { class: "muted" }, "Mitigati has no rule options in this version."));
      return;
    }
    const spec = list.games.find((g) => g.name === game.value);
    for (const [option, values] of Object.entries(list.options)) {
      const defaultValue = option === "score" ? spec.default_score : values[0];
      const select = h("select", { name: `opt-${option}`, "data-option": option },
        values.map((v) => h("option", { value: JSON.stringify(v), selected: v === defaultValue },
          `${String(v)}${v === defaultValue ? " (default)" : ""}`)));
      optionsBox.append(h("label", {}, h("code", {}, option), " ", select));
    }
  }

  game.addEventListener("change", () => { drawSeats(); drawOptions(); });
  drawSeats();
  drawOptions();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const spec = list.games.find((g) => g.name === game.value);
    const options = {};
    for (const select of optionsBox.querySelectorAll("select")) {
      const value = JSON.parse(select.value);
      const option = select.dataset.option;
      const defaultValue = option === "score" ? spec.default_score : list.options[option][0];
      if (value !== defaultValue) options[option] = value;
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
        turn_seconds: Number(turn.value), seat, bots,
      });
      location.hash = `#/t/${table.table}`;
    } catch (error) { toast(error.message); }
  });
  form.append(
    h("h2", {}, "New table"),
    h("div", { class: "row" }, h("label", {}, "Game ", game), name),
    h("div", { class: "row" }, h("label", {}, "Hands ", hands), h("label", {}, "Seconds a turn ", turn)),
    seatsBox,
    h("details", {}, h("summary", {}, "Rule options (", h("a", { href: "#/rules/mighty" }, "rules §9"), ")"), optionsBox),
    h("button", { type: "submit", class: "primary", "data-action": "create_table" }, "Create table"),
  );
  return form;
}

function seatLabel(seat) {
  if (!seat.player) return h("span", { class: "free" }, "free");
  const name = seat.name ?? "?";
  return h("a", { href: `#/p/${seat.player}`, class: seat.bot ? "bot" : "" }, seat.bot ? name : name);
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
  if (mine) actions.append(h("a", { class: "button primary", href: `#/t/${table.table}` }, "Return"));
  else if (table.status === "open" && free) actions.append(h("button", { class: "primary", "data-action": "join", onclick: () => join(table.table) }, "Join"));
  if (!mine && table.status !== "finished") actions.append(h("a", { class: "button", href: `#/t/${table.table}`, "data-action": "spectate" }, "Watch"));
  if (table.hands_played > 0 || table.status === "finished") actions.append(h("a", { class: "button", href: `#/r/${table.table}/1`, "data-action": "replay" }, "Replays"));
  return h("li", { class: `table-row ${table.status}`, "data-table": table.table },
    h("div", { class: "what" }, h("strong", {}, table.name || table.table), " ",
      h("span", { class: "tag" }, table.game), " ", h("span", { class: `status ${table.status}` }, table.status),
      h("div", { class: "muted" }, `hand ${table.hands_played} of ${table.hands} · ${table.turn_seconds} s a turn`)),
    h("div", { class: "who" }, table.seats.map((s) => h("span", { class: "seat-chip" }, `${s.seat}: `, seatLabel(s)))),
    actions);
}

function tablesPanel(list) {
  const game = gameSelect(list, "", { any: true });
  const status = h("select", { name: "status" }, ["", "open", "playing", "finished"].map((s) => h("option", { value: s }, s || "any status")));
  const rows = h("ul", { class: "tables" });
  async function load() {
    const query = new URLSearchParams();
    if (game.value) query.set("game", game.value);
    if (status.value) query.set("status", status.value);
    try {
      const { tables } = await get(`/tables?${query}`, { auth: false });
      clear(rows);
      tables.sort((a, b) => (b.created || "").localeCompare(a.created || ""));
      if (!tables.length) rows.append(h("li", { class: "muted" }, "No table yet: create one or quick play."));
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
    h("div", { class: "row spread" }, h("h2", {}, "Tables"),
      h("div", { class: "filters" }, game, status, h("button", { onclick: load, title: "Refresh" }, "↻"))),
    rows), () => clearInterval(timer)];
}

export function showLobby(root, onLogin) {
  let stop = () => {};
  (async () => {
    const list = await games();
    if (!session.token) {
      root.append(h("div", { class: "lobby" }, h("section", { class: "hero" },
        h("h1", {}, "Mighty"), h("p", {}, "The Korean trick-taking game for 3 to 8, and the Italian tarot game Mitigati. ",
          h("a", { href: "#/rules/mighty" }, "How to play"), ".")),
      loginPanel(() => { onLogin(); clear(root); stop(); stop = draw(); })));
      return;
    }
    stop = draw();
    function draw() {
      const [panel, stopTables] = tablesPanel(list);
      root.append(h("div", { class: "lobby" }, h("div", { class: "side" }, quickplayPanel(list), createPanel(list)), panel));
      return stopTables;
    }
  })();
  return () => stop();
}

// The live table: the felt, the player's hand with the legal cards highlighted, the
// actions the view's `legal` list allows, whose turn and the time left, the hand's result
// and the match ledger. Views come over the WebSocket stream (resumed after a reload or
// a dropped socket from the last version seen); commands go over HTTP.

import { follow, get, post, sendCommand, session } from "./api.js";
import { cardText, drawFelt, drawResult } from "./board.js";
import { cardElement, SUIT_SYMBOL } from "./cards.js";
import { chatPanel } from "./chat.js";
import { rememberCommitment } from "./commit.js";
import { clear, h, toast } from "./dom.js";
import { gameInfo, handInOrder } from "./games.js";
import { fmtNumber, t } from "./i18n.js";
import { ledgerChart } from "./ledger.js";

const CACHE = (table) => `mighty.view.${table}`;

/** The view document: the API view holds the game's view of the hand (domain/mighty/views.py,
 * domain/mitigati/views.py) at its top level, under the API's own fields. */
export function docOf(view) {
  return view;
}

/** The last hand that has ended (numbered from 1 like every hand the API shows), or 0:
 * the hand on the table once it is over or the table closed, else the one before it. */
function lastEnded(view) {
  return view.phase === "finished" || view.status === "closed" ? view.hand_no : view.hand_no - 1;
}

function timeLeft(deadline) {
  if (!deadline) return null;
  const ms = Date.parse(deadline) - Date.now();
  if (Number.isNaN(ms)) return null;
  const s = Math.max(0, Math.round(ms / 1000));
  return `${fmtNumber(Math.floor(s / 60))}:${String(s % 60).padStart(2, "0")}`;
}

export function showTable(root, tableId) {
  const state = {
    view: null, table: null, names: [], busy: false, selected: new Set(), focus: null,
    choosing: null, lastHand: null, result: null, link: "connecting", ledger: null,
    info: null, // the table's game as the server describes it (games.js)
  };
  const page = h("div", { class: "table-page", "data-table": tableId });
  const chat = chatPanel(tableId); // beside the page, not redrawn with it (chat.js)
  root.append(h("div", { class: "table-with-chat" }, page, chat.element));
  let stream = null;
  let ticker = null;
  let closed = false;

  try {
    const cached = JSON.parse(sessionStorage.getItem(CACHE(tableId)) || "null");
    if (cached && cached.reader === (session.player ?? null)) state.view = cached.view;
  } catch { /* a damaged cache is ignored */ }

  async function loadTable() {
    try {
      state.table = await get(`/tables/${tableId}`, { auth: false });
      // a bot's name says its level ("Ada · beginner bot")
      state.names = state.table.seats.map((s) => (s.bot ? t("web.seat.bot_named", { name: s.name ?? t("web.seat.bot"), level: t(`web.bot.${s.bot}`) }) : s.name ?? (s.player ? "?" : t("web.seat.free"))));
      draw();
    } catch (error) { toast(error.message); }
  }

  /** The ledger; its worker may be a step behind the view, so it is asked again until it
   * holds every hand the view has scored. */
  async function loadLedger(tries = 20) {
    try {
      state.ledger = await get(`/tables/${tableId}/ledger`, { auth: false });
      draw();
    } catch { /* no ledger yet */ }
    const behind = (state.ledger?.hands.length ?? 0) < (state.view?.hands_scored ?? 0);
    if (behind && tries > 0 && !closed) setTimeout(() => loadLedger(tries - 1), 300);
  }

  /** The hand just ended, as this seat saw it (its replay's last step). */
  async function loadResult(handNo) {
    try {
      const as = state.view?.seat ?? "spectator";
      const { steps } = await get(`/tables/${tableId}/hands/${handNo}/replay?as=${as}`, { auth: false });
      const last = steps[steps.length - 1]?.view;
      if (last?.scores) { state.result = { hand: handNo, doc: last }; draw(); }
    } catch { /* a hand thrown in has no result */ }
  }

  function onView(view) {
    const before = state.view;
    const doc = docOf(view);
    const prevDoc = before ? docOf(before) : null;
    state.view = view;
    state.busy = false;
    state.choosing = null;
    if (!prevDoc || prevDoc.phase !== doc.phase || prevDoc.hand_no !== doc.hand_no) state.selected.clear();
    for (const card of [...state.selected]) if (!(view.hand || []).includes(card)) state.selected.delete(card);
    rememberCommitment(tableId, view.hand_no, view.commitment);
    sessionStorage.setItem(CACHE(tableId), JSON.stringify({ reader: session.player ?? null, view }));
    if (!state.table || JSON.stringify(before?.seats) !== JSON.stringify(view.seats)) loadTable();
    if (view.game && state.info?.game !== view.game) {
      gameInfo(view.game).then((info) => { state.info = info ?? null; draw(); }).catch(() => {});
    }
    if (before && view.hands_scored !== before.hands_scored) {
      loadLedger();
      if (doc.phase !== "finished") loadResult(lastEnded(view));
    }
    if (doc.phase === "finished" && !state.ledger) loadLedger();
    draw();
  }

  async function send(command) {
    if (state.busy) return;
    state.busy = true;
    draw();
    try {
      await sendCommand(tableId, command);
    } catch (error) {
      state.busy = false;
      toast(error.message); // the API's sentence: why the move was refused
      draw();
    }
  }

  function legal() { return state.view?.legal || []; }
  function playsOf(card) { return legal().filter((c) => c.type === "play" && c.card === card); }
  function discardStep() { return legal().find((c) => c.type === "discard" && c.count !== undefined); }
  function legalCards() {
    return state.view ? handInOrder(state.view, state.info).filter((card) => playsOf(card).length > 0) : [];
  }

  function clickCard(card) {
    const step = discardStep();
    if (step) {
      if (!step.from.includes(card)) return;
      if (state.selected.has(card)) state.selected.delete(card);
      else if (state.selected.size < step.count) state.selected.add(card);
      draw();
      return;
    }
    const plays = playsOf(card);
    if (!plays.length || state.busy) return;
    if (plays.length === 1) { send(plays[0]); return; }
    state.choosing = card; // the Joker's suit, or whether to call the Joker
    draw();
  }

  function handRow() {
    const view = state.view;
    const game = view.game;
    const step = discardStep();
    const hand = handInOrder(view, state.info);
    const row = h("div", { class: `hand${step ? " discarding" : ""}`, role: "group", "aria-label": t("web.table.your_hand") });
    const legalNow = new Set(legalCards());
    hand.forEach((card) => {
      const playable = legalNow.has(card) && !state.busy;
      const selectable = step ? step.from.includes(card) : false;
      const button = h("button", {
        class: `card-button${playable ? " legal" : ""}${state.selected.has(card) ? " selected" : ""}${state.focus === card ? " focused" : ""}`,
        "data-card": card, "data-legal": legalNow.has(card) || selectable ? true : undefined,
        disabled: !(playable || selectable) ? true : undefined,
        "aria-pressed": step ? String(state.selected.has(card)) : undefined,
        onclick: () => clickCard(card),
        onfocus: () => { state.focus = card; },
      }, cardElement(card, game));
      row.append(button);
    });
    return row;
  }

  function actionButton(command, label, extra = {}) {
    return h("button", { class: "action", "data-action": command.type, disabled: state.busy ? true : undefined, onclick: () => send(command), ...extra }, label);
  }

  function actionsPanel() {
    const view = state.view;
    const game = view.game;
    const doc = docOf(view);
    const panel = h("div", { class: "actions-panel" });
    const commands = legal();
    if (state.choosing) {
      const options = playsOf(state.choosing);
      const chooser = h("div", { class: "chooser" }, h("span", {}, `${cardText(state.choosing, game)}: `));
      for (const option of options) {
        if (option.suit) {
          chooser.append(h("button", { class: `action suit ${option.suit === "H" || option.suit === "D" ? "red" : ""}`, "data-action": "play", "data-suit": option.suit, onclick: () => send(option) },
            `${SUIT_SYMBOL[option.suit] ?? ""} ${option.label}`));
        } else if (option.joker_call !== undefined) {
          chooser.append(h("button", { class: "action", "data-action": "play", "data-joker-call": String(option.joker_call), onclick: () => send(option) },
            option.label));
        } else {
          chooser.append(actionButton(option, option.label));
        }
      }
      chooser.append(h("button", { class: "link", onclick: () => { state.choosing = null; draw(); } }, t("web.table.cancel")));
      panel.append(chooser);
      return panel;
    }
    const byType = new Map();
    for (const command of commands) {
      if (command.type === "play") continue;
      if (!byType.has(command.type)) byType.set(command.type, []);
      byType.get(command.type).push(command);
    }
    for (const [type, group] of byType) {
      if (type === "discard" && group[0].count !== undefined) {
        const step = group[0];
        const chosen = [...state.selected];
        panel.append(h("div", { class: "group" },
          h("span", { class: "prompt" }, t("web.table.choose", { step: step.label, chosen: chosen.length, count: step.count })),
          h("button", {
            class: "action primary", "data-action": "discard", disabled: chosen.length !== step.count || state.busy ? true : undefined,
            // mighty-3: the step names the kitty cards kept (`take`); they go with the discard
            onclick: () => send(step.take ? { type: "discard", cards: chosen, take: step.take } : { type: "discard", cards: chosen }),
          }, t("web.table.discard"))));
      } else if (type === "bid") {
        panel.append(bidControls(group));
      } else if (type === "change_trump") {
        panel.append(h("div", { class: "group" }, h("span", { class: "prompt" }, t("web.table.change_trump")),
          group.map((c) => actionButton(c, `${SUIT_SYMBOL[c.trump] ?? c.trump}`, { "data-trump": c.trump, title: c.label, "aria-label": c.label, class: `action ${c.trump === "H" || c.trump === "D" ? "red" : ""}` }))));
      } else if (group.length <= 6) {
        panel.append(h("div", { class: "group" }, group.map((c) => actionButton(c, c.label))));
      } else {
        const select = h("select", { "data-choice": type }, group.map((c, i) => h("option", { value: i }, c.label)));
        panel.append(h("div", { class: "group" }, h("span", { class: "prompt" }, type === "call_friend" ? t("web.table.call_friend") : `${type}:`), select,
          h("button", { class: "action primary", "data-action": type, disabled: state.busy ? true : undefined, onclick: () => send(group[Number(select.value)]) },
            type === "call_friend" ? t("web.table.call") : t("web.table.send"))));
      }
    }
    if (!panel.childNodes.length && view.to_act === view.seat && view.seat !== null && legalCards().length) {
      panel.append(h("span", { class: "prompt" }, t("web.table.pick_card")));
    }
    if (doc.phase === "bidding" && view.seat !== null && !commands.length) panel.append(h("span", { class: "prompt muted" }, t("web.table.others_bid")));
    return panel;
  }

  function bidControls(group) {
    const pointsList = [...new Set(group.map((c) => c.points))].sort((a, b) => a - b);
    if (state.bidPoints === undefined || !pointsList.includes(state.bidPoints)) state.bidPoints = pointsList[0];
    const select = h("select", { name: "points", "aria-label": t("web.table.points"), onchange: (e) => { state.bidPoints = Number(e.target.value); draw(); } },
      pointsList.map((p) => h("option", { value: p, selected: p === state.bidPoints }, fmtNumber(p))));
    const trumps = ["S", "H", "D", "C", "NT"].map((trump) => {
      const command = group.find((c) => c.points === state.bidPoints && c.trump === trump);
      return h("button", {
        class: `action bid ${trump === "H" || trump === "D" ? "red" : ""}`, "data-action": "bid", "data-trump": trump,
        disabled: !command || state.busy ? true : undefined, onclick: () => command && send(command), title: command ? command.label : t("web.table.not_legal_bid"),
      }, trump === "NT" ? t("web.suit.nt_short") : SUIT_SYMBOL[trump]);
    });
    return h("div", { class: "group" }, h("span", { class: "prompt" }, t("web.table.bid"), " "), select, trumps);
  }

  function statusLine() {
    const view = state.view;
    const doc = docOf(view);
    const who = view.to_act;
    let text;
    if (view.status === "open" || view.phase === "waiting") {
      const seated = (view.seats || []).filter(Boolean).length;
      text = t("web.table.waiting_players", { seated, seats: (view.seats || []).length });
    } else if (view.status === "closed") text = t("web.table.match_over");
    else if (who === null || who === undefined) text = doc.phase === "finished" ? t("web.table.hand_over") : "…";
    else if ((view.away || []).includes(view.seat)) text = t("web.table.you_are_away");
    else if (who === view.seat) text = t("web.table.your_turn");
    else text = t("web.table.to_play", { name: state.names[who] ?? t("web.seat.n", { seat: who }) });
    const left = timeLeft(view.deadline);
    return h("div", { class: `status-line${who === view.seat && who !== null ? " mine" : ""}` },
      h("span", { class: "whose", "data-to-act": who ?? "" }, text),
      (view.away || []).includes(view.seat) && view.status !== "closed" && session.token
        ? h("button", { class: "primary", "data-action": "back", onclick: async () => {
          try { await post(`/tables/${tableId}/join`, {}); } catch (error) { toast(error.message); }
        } }, t("web.table.im_back"))
        : null,
      left ? h("span", { class: "clock", "data-deadline": view.deadline }, t("web.table.time_left", { left })) : null,
      h("span", { class: `link-state ${state.link}`, title: t("web.table.connection") }, state.link === "open" ? "●" : state.link === "retrying" ? t("web.table.reconnecting") : "○"));
  }

  function header() {
    const view = state.view;
    const tbl = state.table;
    const seat = view?.seat;
    const controls = [];
    if (tbl && seat === null && tbl.status === "open" && session.token) {
      controls.push(h("button", { class: "primary", "data-action": "join", onclick: async () => {
        try { await post(`/tables/${tableId}/join`, {}); } catch (error) { toast(error.message); }
      } }, t("web.table.take_seat")));
    }
    if (view && seat !== null && view.status !== "closed") {
      controls.push(h("button", { "data-action": "leave", onclick: async () => {
        try { await post(`/tables/${tableId}/leave`); location.hash = "#/"; } catch (error) { toast(error.message); }
      } }, t("web.table.leave")));
    }
    if (view && view.status === "closed" && session.token) {
      controls.push(h("button", { class: "primary", "data-action": "rematch", onclick: async () => {
        try { const next = await post(`/tables/${tableId}/rematch`); location.hash = `#/t/${next.table}`; } catch (error) { toast(error.message); }
      } }, t("web.table.rematch")));
    }
    if (view && lastEnded(view) > 0) controls.push(h("a", { class: "button", href: `#/r/${tableId}/${lastEnded(view)}`, "data-action": "replay" }, t("web.table.replay")));
    return h("div", { class: "table-head" },
      h("div", {}, h("strong", {}, tbl?.name || tableId), " ", h("span", { class: "tag" }, view?.game ?? tbl?.game ?? ""),
        view ? h("span", { class: "muted" }, " · ", tbl ? t("web.table.hand_of", { hand: view.hand_no, hands: tbl.hands }) : t("web.table.hand", { hand: view.hand_no }),
          seat === null ? ` · ${t("web.table.watching")}` : "") : null,
        " ", h("a", { href: `#/rules/${state.info?.family ?? "mighty"}`, class: "muted" }, t("web.table.rules"))),
      h("div", { class: "controls" }, controls));
  }

  function draw() {
    if (closed) return;
    const keep = document.activeElement?.dataset?.card;
    clear(page);
    page.append(header());
    const view = state.view;
    if (!view) { page.append(h("p", { class: "muted" }, t("web.table.connecting"))); return; }
    page.dataset.version = view.version;
    page.dataset.phase = view.phase;
    const doc = docOf(view);
    const players = (view.seats || []).length || 5;
    const ctx = { game: view.game, players, me: view.seat, names: state.names, totals: view.totals, away: view.away || [] };
    const felt = drawFelt(doc, ctx);
    page.append(h("div", { class: "felt-wrap" }, felt));
    page.append(statusLine());
    if (state.result && (doc.phase !== "finished")) {
      const panel = drawResult(state.result.doc, ctx);
      if (panel) {
        panel.prepend(h("button", { class: "link close", onclick: () => { state.result = null; draw(); }, "aria-label": t("web.table.close") }, "✕"));
        panel.querySelector("h3").prepend(t("web.table.hand_prefix", { hand: state.result.hand }), " ");
        page.append(h("div", { class: "result-wrap" }, panel, state.ledger ? ledgerChart(state.ledger, state.names) : null));
      }
    }
    if (doc.phase === "finished" && doc.scores) {
      page.append(h("div", { class: "result-wrap" }, drawResult(doc, ctx), state.ledger ? ledgerChart(state.ledger, state.names) : null));
    }
    if (view.seat !== null && view.seat !== undefined) {
      page.append(actionsPanel());
      page.append(handRow());
    }
    if (keep) page.querySelector(`[data-card="${keep}"]:not([disabled])`)?.focus();
  }

  function onKey(event) {
    if (!state.view || event.target.closest?.("input, select, textarea")) return;
    const cards = legalCards();
    if (!cards.length || state.busy || discardStep()) return;
    let index = cards.indexOf(state.focus);
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      const step = event.key === "ArrowRight" ? 1 : -1;
      index = index < 0 ? (step > 0 ? 0 : cards.length - 1) : (index + step + cards.length) % cards.length;
    } else if (/^[0-9]$/.test(event.key)) {
      const n = event.key === "0" ? 10 : Number(event.key);
      if (n > cards.length) return;
      index = n - 1;
    } else if (event.key === "Enter" && index >= 0 && document.activeElement?.dataset?.card !== state.focus) {
      event.preventDefault();
      clickCard(state.focus);
      return;
    } else return;
    event.preventDefault();
    state.focus = cards[index];
    page.querySelector(`[data-card="${state.focus}"]`)?.focus();
    for (const b of page.querySelectorAll(".card-button.focused")) b.classList.remove("focused");
    page.querySelector(`[data-card="${state.focus}"]`)?.classList.add("focused");
  }

  let resizing = null;
  const onResize = () => { clearTimeout(resizing); resizing = setTimeout(draw, 100); };
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", onResize);
  draw();
  loadTable();
  loadLedger();
  stream = follow(tableId, {
    after: state.view?.version ?? 0,
    onView,
    onChat: chat.receive,
    onLink: (link) => { state.link = link; draw(); },
    onError: (error) => { toast(error.message); },
  });
  window.mightyStream = stream; // for the tests: drop the socket as a network would
  ticker = setInterval(() => {
    const clock = page.querySelector(".clock");
    if (clock && state.view?.deadline) clock.textContent = t("web.table.time_left", { left: timeLeft(state.view.deadline) });
  }, 1000);
  return () => {
    closed = true;
    stream?.close();
    clearInterval(ticker);
    document.removeEventListener("keydown", onKey);
    window.removeEventListener("resize", onResize);
  };
}

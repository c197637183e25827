// The live table: the felt, the player's hand with the legal cards highlighted, the
// actions the view's `legal` list allows, whose turn and the time left, the hand's result
// and the match ledger. Views come over the WebSocket stream (resumed after a reload or
// a dropped socket from the last version seen); commands go over HTTP.

import { follow, get, post, sendCommand, session } from "./api.js";
import { bidMark, cardText, contractStrip, declarerSide, drawFelt, drawResult } from "./board.js";
import { cardElement, cardEntry, suitMark, useGame } from "./cards.js";
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
    choosing: null, lastHand: null, result: null, link: "connecting", ledger: null, hint: null,
    info: null, // the table's game as the server describes it (games.js)
    take: new Set(), // mighty-3's discard step: the kitty cards chosen to keep
    exTake: null, // mighty-3's kitty exchange: the kitty card chosen to take
    friendPick: [], friendSlot: 0, friendSuit: null, advice: null, // the friend call picker
    amounts: {}, // a stepper's amount per action (Mitigati's bargaining)
    revealed: [], // friend seats just revealed: a moment of emphasis on the felt
  };
  let revealTimer = null;
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

  /** The table's seats and names; its directory worker may be a step behind the view (a
   * view is pushed as it is folded, the lobby's entry a moment later), so it is asked
   * again until its seats are the view's. */
  let tableAgain = null;
  async function loadTable(tries = 20) {
    clearTimeout(tableAgain);
    try {
      state.table = await get(`/tables/${tableId}`, { auth: false });
      // a bot's name and level: apart on the felt's nameplate (a phone's drops the level,
      // the name stays whole), together elsewhere ("Ada · beginner bot")
      state.plates = state.table.seats.map((s) => (s.bot ? { name: s.name ?? t("web.seat.bot"), level: t(`web.bot.${s.bot}`) } : null));
      state.names = state.table.seats.map((s, i) => (state.plates[i] ? t("web.seat.bot_named", state.plates[i]) : s.name ?? (s.player ? "?" : t("web.seat.free"))));
      draw();
    } catch (error) { toast(error.message); }
    const seats = state.table?.seats.map((s) => s.player ?? null);
    const behind = state.view?.seats && seats && JSON.stringify(seats) !== JSON.stringify(state.view.seats);
    if (behind && tries > 0 && !closed) tableAgain = setTimeout(() => loadTable(tries - 1), 300);
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
    if (!prevDoc || prevDoc.phase !== doc.phase || prevDoc.hand_no !== doc.hand_no) {
      state.selected.clear();
      state.take.clear();
      state.exTake = null;
      state.friendPick = []; state.friendSlot = 0; state.friendSuit = null; state.advice = null;
      state.amounts = {};
    }
    if (prevDoc && prevDoc.hand_no === doc.hand_no) {
      const known = declarerSide(prevDoc);
      const now = [...declarerSide(doc)].filter((seat) => !known.has(seat) && seat !== doc.declarer);
      if (now.length) {
        state.revealed = now;
        clearTimeout(revealTimer);
        revealTimer = setTimeout(() => { state.revealed = []; draw(); }, 3000);
      }
    }
    const step = discardStep();
    for (const card of [...state.selected]) if (!(step ? step.from : view.hand || []).includes(card)) state.selected.delete(card);
    rememberCommitment(tableId, view.hand_no, view.commitment);
    sessionStorage.setItem(CACHE(tableId), JSON.stringify({ reader: session.player ?? null, view }));
    if (!state.table || JSON.stringify(before?.seats) !== JSON.stringify(view.seats)) loadTable();
    if (view.game && state.info?.game !== view.game) {
      gameInfo(view.game).then((info) => { state.info = info ?? null; useGame(state.info); draw(); }).catch(() => {});
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
  function discardSteps() { return legal().filter((c) => c.type === "discard" && c.count !== undefined); }
  /** The kitty cards a step may keep (mighty-3: one step per set, docs/api.md), in order. */
  function kittyChoices() {
    const seen = [];
    for (const step of discardSteps()) for (const card of step.take || []) if (!seen.includes(card)) seen.push(card);
    return seen;
  }
  /** The discard step to send: the only one, or the one whose `take` is the kitty cards
   * chosen; until they are all chosen, a step over the hand alone that cannot be sent. */
  function discardStep() {
    const steps = discardSteps();
    if (!steps.length || !steps[0].take) return steps[0];
    const key = (cards) => [...cards].sort().join(" ");
    const match = steps.find((step) => key(step.take) === key(state.take));
    if (match) return match;
    const kitty = kittyChoices();
    return { ...steps[0], from: steps[0].from.filter((c) => !kitty.includes(c)), take: null, pending: true, keep: steps[0].take.length };
  }
  function legalCards() {
    return state.view ? handInOrder(state.view, state.info).filter((card) => playsOf(card).length > 0) : [];
  }

  function exchanges() { return legal().filter((c) => c.type === "exchange"); }

  function clickCard(card) {
    const swap = state.exTake && exchanges().find((c) => c.take === state.exTake && c.discard === card);
    if (swap) { send(swap); return; }
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
    // mighty-3: the kitty cards chosen to keep join the hand, to be kept or discarded
    const kept = step?.take ? step.take.filter((c) => !(view.hand || []).includes(c)) : [];
    const hand = [...handInOrder(view, state.info), ...kept];
    const row = h("div", { class: `hand${step ? " discarding" : ""}`, role: "group", "aria-label": t("web.table.your_hand") });
    const legalNow = new Set(legalCards());
    const swaps = state.exTake ? new Set(exchanges().filter((c) => c.take === state.exTake).map((c) => c.discard)) : new Set();
    hand.forEach((card) => {
      const playable = (legalNow.has(card) || swaps.has(card)) && !state.busy;
      const selectable = step ? step.from.includes(card) : false;
      const button = h("button", {
        class: `card-button${playable ? " legal" : ""}${state.selected.has(card) ? " selected" : ""}${state.focus === card ? " focused" : ""}${kept.includes(card) ? " from-kitty" : ""}`,
        "data-card": card, "data-legal": legalNow.has(card) || selectable || swaps.has(card) ? true : undefined,
        disabled: !(playable || selectable) ? true : undefined,
        "aria-pressed": step ? String(state.selected.has(card)) : undefined,
        onclick: () => clickCard(card),
        onfocus: () => { state.focus = card; },
      }, cardElement(card, game));
      if (hintedCards().has(card)) button.classList.add("hinted");
      row.append(button);
    });
    return row;
  }

  function actionButton(command, label, extra = {}) {
    return h("button", { class: `action${isHinted(command) ? " hinted" : ""}`, "data-action": command.type, disabled: state.busy ? true : undefined, onclick: () => send(command), ...extra }, label);
  }

  // ---- learners' hints (docs/api.md, "Hints"): what a bot would play here, on a table
  // whose creator allowed it; shown for the view it was asked at, and gone once it moved

  function currentHint() {
    return state.hint && state.view && state.hint.version === state.view.version ? state.hint : null;
  }

  function hintedCards() {
    const command = currentHint()?.command;
    if (!command) return new Set();
    return new Set([command.card, ...(command.cards || []), command.take, command.discard].filter((c) => typeof c === "string"));
  }

  function isHinted(command) {
    const hinted = currentHint()?.command;
    if (!hinted || hinted.type !== command.type) return false;
    return Object.entries(hinted).every(([key, value]) => key === "cards" || JSON.stringify(command[key]) === JSON.stringify(value));
  }

  function canHint() {
    const view = state.view;
    return Boolean(state.table?.hints && view && view.seat !== null && view.seat !== undefined && view.to_act === view.seat && legal().length);
  }

  async function askHint() {
    if (!canHint() || state.busy) return;
    try {
      const hint = await get(`/tables/${tableId}/hint`);
      state.hint = hint;
      draw();
    } catch (error) { toast(error.message); }
  }

  function hintLine() {
    const hint = currentHint();
    return h("div", { class: "hint-line" },
      h("button", { class: "action hint", "data-action": "hint", onclick: askHint, title: t("web.hint.title"), "aria-keyshortcuts": "H" }, t("web.hint.button")),
      hint ? h("span", { class: "hint-says", "data-hint": hint.command.type, role: "status" }, t("web.hint.says", { label: hint.label })) : null);
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
          chooser.append(h("button", { class: "action suit", "data-action": "play", "data-suit": option.suit, onclick: () => send(option) },
            suitMark(option.suit, game), " ", option.label));
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
    if (doc.phase === "bidding" && doc.auction) panel.append(auctionPanel(doc, byType.get("bid") || []));
    for (const [type, group] of byType) {
      if (type === "discard" && group[0].count !== undefined) {
        panel.append(discardControls());
      } else if (type === "bid") {
        panel.append(bidControls(group));
      } else if (type === "exchange") {
        panel.append(exchangeControls(group));
      } else if (type === "change_trump") {
        panel.append(h("div", { class: "group" }, h("span", { class: "prompt" }, t("web.table.change_trump")),
          group.map((c) => actionButton(c, suitMark(c.trump, game), { "data-trump": c.trump, title: c.label, "aria-label": c.label }))));
      } else if (type === "call_friend") {
        panel.append(friendPicker(group));
      } else if (group.some((c) => typeof c.amount === "number")) {
        panel.append(amountControls(type, group));
      } else if (group.length <= 6) {
        panel.append(h("div", { class: "group" }, group.map((c) => actionButton(c, c.label))));
      } else {
        const select = h("select", { "data-choice": type }, group.map((c, i) => h("option", { value: i }, c.label)));
        panel.append(h("div", { class: "group" }, h("span", { class: "prompt" }, `${type}:`), select,
          h("button", { class: "action primary", "data-action": type, disabled: state.busy ? true : undefined, onclick: () => send(group[Number(select.value)]) },
            t("web.table.send"))));
      }
    }
    if (!byType.size && view.to_act === view.seat && view.seat !== null && legalCards().length) {
      panel.append(h("span", { class: "prompt" }, t("web.table.pick_card")));
    }
    if (doc.phase === "bidding" && view.seat !== null && !commands.length) panel.append(h("span", { class: "prompt muted" }, t("web.table.others_bid")));
    if (canHint()) panel.append(hintLine());
    return panel;
  }

  const nameOf = (seat) => state.names[seat] ?? t("web.seat.n", { seat });

  /** The auction so far: the standing bid and its bidder, the lowest bid the player may
   * make now, and every bid and pass in order. */
  function auctionPanel(doc, bids) {
    const auction = doc.auction || [];
    const standing = [...auction].reverse().find((entry) => entry[1] > 0);
    const lowest = bids.length ? Math.min(...bids.map((c) => c.points)) : null;
    return h("div", { class: "auction", "data-auction": auction.length },
      h("div", { class: "standing" },
        standing
          ? h("span", { "data-high-bid": standing[1] }, t("web.bid.high", { name: nameOf(standing[0]) }), " ", h("strong", {}, bidMark(standing, state.view.game)))
          : h("span", { "data-high-bid": 0 }, t("web.bid.none")),
        lowest !== null ? h("span", { class: "minimum", "data-min-bid": lowest }, t("web.bid.minimum", { points: fmtNumber(lowest) })) : null),
      auction.length
        ? h("ol", { class: "history", "aria-label": t("web.bid.history") }, auction.map((entry) =>
          h("li", { class: entry[1] === 0 ? "pass" : "" }, h("span", { class: "who" }, nameOf(entry[0])), " ", bidMark(entry, state.view.game))))
        : null);
  }

  function bidControls(group) {
    const game = state.view.game;
    const pointsList = [...new Set(group.map((c) => c.points))].sort((a, b) => a - b);
    if (state.bidPoints === undefined || !pointsList.includes(state.bidPoints)) state.bidPoints = pointsList[0];
    const at = pointsList.indexOf(state.bidPoints);
    const stepTo = (i) => { state.bidPoints = pointsList[Math.max(0, Math.min(pointsList.length - 1, i))]; draw(); };
    const select = h("select", { name: "points", "aria-label": t("web.table.points"), onchange: (e) => { state.bidPoints = Number(e.target.value); draw(); } },
      pointsList.map((p) => h("option", { value: p, selected: p === state.bidPoints }, fmtNumber(p))));
    const trumps = [...new Set(group.map((c) => c.trump))].map((trump) => {
      const command = group.find((c) => c.points === state.bidPoints && c.trump === trump);
      return h("button", {
        class: "action bid", "data-action": "bid", "data-trump": trump,
        disabled: !command || state.busy ? true : undefined, onclick: () => command && send(command), title: command ? command.label : t("web.table.not_legal_bid"),
        "aria-label": command ? command.label : t("web.table.not_legal_bid"),
      }, suitMark(trump, game));
    });
    return h("div", { class: "group bid-controls" }, h("span", { class: "prompt" }, t("web.table.bid"), " "),
      h("span", { class: "stepper" },
        h("button", { class: "step", "data-step": "-1", "aria-label": t("web.table.less"), disabled: at <= 0 ? true : undefined, onclick: () => stepTo(at - 1) }, "−"),
        select,
        h("button", { class: "step", "data-step": "+1", "aria-label": t("web.table.more"), disabled: at >= pointsList.length - 1 ? true : undefined, onclick: () => stepTo(at + 1) }, "+")),
      trumps);
  }

  /** The discard step: the cards chosen of the hand, the count; in mighty-3 first the
   * kitty cards to keep (each step of `legal` keeps one set of them, its `take`). */
  function discardControls() {
    const step = discardStep();
    const game = state.view.game;
    const out = h("div", { class: "group discard-controls" });
    const kitty = kittyChoices();
    if (kitty.length) {
      const keep = discardSteps()[0].take.length;
      out.append(h("div", { class: "kitty-pick", role: "group", "aria-label": t("web.table.take_kitty", { chosen: state.take.size, count: keep }) },
        h("span", { class: "prompt" }, t("web.table.take_kitty", { chosen: state.take.size, count: keep })),
        kitty.map((card) => h("button", {
          class: `card-button legal${state.take.has(card) ? " selected" : ""}`, "data-take": card, "aria-pressed": String(state.take.has(card)),
          disabled: state.busy ? true : undefined,
          onclick: () => {
            if (state.take.has(card)) { state.take.delete(card); state.selected.delete(card); } else if (state.take.size < keep) state.take.add(card);
            const next = discardStep();
            for (const c of [...state.selected]) if (!next.from.includes(c)) state.selected.delete(c);
            draw();
          },
        }, cardElement(card, game)))));
    }
    const chosen = [...state.selected];
    // until the kitty cards are chosen, no step's label fits: the plain word for the step
    const label = step.pending ? t("web.table.discard") : step.label;
    out.append(h("span", { class: "prompt", "data-discard-count": step.count }, t("web.table.choose", { step: label, chosen: chosen.length, count: step.count })),
      h("button", {
        class: "action primary", "data-action": "discard", disabled: step.pending || chosen.length !== step.count || state.busy ? true : undefined,
        onclick: () => send(step.take ? { type: "discard", cards: chosen, take: step.take } : { type: "discard", cards: chosen }),
      }, t("web.table.discard")));
    return out;
  }

  /** mighty-3's kitty exchange: a card of the kitty to take, then a card of the hand to
   * give back (clicked in the hand). */
  function exchangeControls(group) {
    const game = state.view.game;
    const takes = [...new Set(group.map((c) => c.take))];
    if (state.exTake && !takes.includes(state.exTake)) state.exTake = null;
    return h("div", { class: "group exchange-controls" },
      h("span", { class: "prompt" }, state.exTake ? t("web.table.give_back") : t("web.table.take_one")),
      takes.map((card) => h("button", {
        class: `card-button legal${state.exTake === card ? " selected" : ""}`, "data-take": card, "aria-pressed": String(state.exTake === card),
        disabled: state.busy ? true : undefined, onclick: () => { state.exTake = state.exTake === card ? null : card; draw(); },
      }, cardElement(card, game))));
  }

  /** The friend call: the calls the rules name (the Mighty, a Joker, the first trick's
   * winner, no friend) as buttons, any other card by its suit then its rank; a second
   * friend where the table has two (§10); the lead advice where the contract allows it.
   * The button sends the `legal` entry the choice makes, named by its label. */
  function friendPicker(group) {
    const view = state.view;
    const game = view.game;
    const two = group.some((c) => Array.isArray(c.friend));
    const callable = [];
    for (const c of group) for (const call of Array.isArray(c.friend) ? c.friend : [c.friend]) if (!callable.includes(call)) callable.push(call);
    const suitOf = (call) => cardEntry(call, game)?.suit ?? null;
    const named = callable.filter((call) => call === view.mighty || !suitOf(call));
    named.sort((a, b) => (a === view.mighty ? -1 : b === view.mighty ? 1 : 0));
    const single = (call) => group.find((c) => c.friend === call && !c.lead_suit);
    const pick = (call) => {
      state.friendPick[state.friendSlot] = call;
      if (two && state.friendSlot === 0 && call !== "none") state.friendSlot = 1;
      state.friendSuit = null;
      draw();
    };
    const picks = state.friendPick.filter(Boolean);
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const entry = group.find((c) => (c.lead_suit ?? null) === state.advice && (
      Array.isArray(c.friend) ? picks.length === 2 && (same(c.friend, picks) || same(c.friend, [...picks].reverse())) : picks.length === 1 && c.friend === picks[0]));
    const out = h("div", { class: "group friend-picker", "data-friend-picker": two ? 2 : 1 },
      h("span", { class: "prompt" }, two ? t("web.table.call_friend_n", { n: state.friendSlot + 1 }) : t("web.table.call_friend")));
    out.append(h("div", { class: "named-calls" }, named.map((call) => h("button", {
      class: `action${state.friendPick.includes(call) ? " selected" : ""}`, "data-call": call, disabled: state.busy ? true : undefined,
      onclick: () => pick(call),
    }, single(call)?.label ?? cardText(call, game)))));
    const suits = (state.info?.suits || []).filter((s) => callable.some((call) => call !== view.mighty && suitOf(call) === s.suit));
    out.append(h("div", { class: "suit-calls", role: "group", "aria-label": t("web.table.by_suit") },
      suits.map((s) => h("button", {
        class: `action suit${state.friendSuit === s.suit ? " selected" : ""}`, "data-call-suit": s.suit, title: s.label, "aria-label": s.label,
        onclick: () => { state.friendSuit = state.friendSuit === s.suit ? null : s.suit; draw(); },
      }, suitMark(s.suit, game)))));
    if (state.friendSuit) {
      const cards = callable.filter((call) => call !== view.mighty && suitOf(call) === state.friendSuit);
      out.append(h("div", { class: "rank-calls" }, cards.map((call) => h("button", {
        class: `card-button legal${state.friendPick.includes(call) ? " selected" : ""}`, "data-call": call, onclick: () => pick(call),
      }, cardElement(call, game)))));
    }
    const advice = [...new Set(group.map((c) => c.lead_suit ?? null))];
    if (advice.length > 1) {
      out.append(h("div", { class: "advice" }, h("span", { class: "prompt" }, t("web.table.advice")), advice.map((suit) => h("button", {
        class: `action${state.advice === suit ? " selected" : ""}`, "data-advice": suit ?? "", onclick: () => { state.advice = suit; draw(); },
      }, suit ? suitMark(suit, game) : t("web.table.no_advice")))));
    }
    out.append(h("div", { class: "confirm" },
      h("button", {
        class: "action primary", "data-action": "call_friend", disabled: !entry || state.busy ? true : undefined,
        onclick: () => entry && send(entry),
      }, entry ? entry.label : t("web.table.choose_friend")),
      picks.length ? h("button", { class: "link", "data-action": "clear_call", onclick: () => { state.friendPick = []; state.friendSlot = 0; state.friendSuit = null; draw(); } }, t("web.table.clear")) : null));
    return out;
  }

  /** Entries that differ by an `amount` (Mitigati's offers and asks): each `action` a
   * stepper over its amounts and a button named by the entry's label; the others buttons. */
  function amountControls(type, group) {
    const out = h("div", { class: "group amounts" });
    const plain = group.filter((c) => typeof c.amount !== "number");
    out.append(...plain.map((c) => actionButton(c, c.label, { "data-choice": c.action ?? "" })));
    const actions = [...new Set(group.filter((c) => typeof c.amount === "number").map((c) => c.action))];
    for (const action of actions) {
      const entries = group.filter((c) => c.action === action && typeof c.amount === "number").sort((a, b) => a.amount - b.amount);
      const amounts = entries.map((c) => c.amount);
      if (!amounts.includes(state.amounts[action])) state.amounts[action] = amounts[0];
      const at = amounts.indexOf(state.amounts[action]);
      const set = (i) => { state.amounts[action] = amounts[Math.max(0, Math.min(amounts.length - 1, i))]; draw(); };
      const entry = entries[at];
      out.append(h("div", { class: "stepper-row", "data-stepper": action },
        h("span", { class: "stepper" },
          h("button", { class: "step", "data-step": "-1", "aria-label": t("web.table.less"), disabled: at <= 0 ? true : undefined, onclick: () => set(at - 1) }, "−"),
          h("input", { type: "number", class: "amount", "aria-label": t("web.table.amount"), min: amounts[0], max: amounts[amounts.length - 1], value: entry.amount,
            onchange: (e) => { const v = Number(e.target.value); const i = amounts.findIndex((a) => a >= v); set(i < 0 ? amounts.length - 1 : i); } }),
          h("button", { class: "step", "data-step": "+1", "aria-label": t("web.table.more"), disabled: at >= amounts.length - 1 ? true : undefined, onclick: () => set(at + 1) }, "+")),
        actionButton(entry, entry.label, { "data-choice": action })));
    }
    return out;
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
        " ", h("a", { href: `#/rules/${state.info?.guide?.name ?? ""}`, class: "muted" }, t("web.table.rules"))),
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
    const ctx = { game: view.game, players, me: view.seat, names: state.names, plates: state.plates, totals: view.totals, away: view.away || [], revealed: state.revealed };
    const felt = drawFelt(doc, ctx);
    page.append(h("div", { class: "felt-wrap" }, felt), contractStrip(doc, ctx));
    page.append(statusLine());
    // the controls of the hand under way first, the result of the one before below them,
    // so the next hand's controls stay in view; with no cards in hand (the match over), the
    // result right under the felt
    const playing = view.seat !== null && view.seat !== undefined;
    const controls = playing ? [actionsPanel(), handRow()] : [];
    const idle = !legal().length && !(view.hand || []).length;
    if (!idle) page.append(...controls);
    if (state.result && (doc.phase !== "finished")) {
      const panel = drawResult(state.result.doc, ctx);
      if (panel) {
        panel.prepend(h("button", { class: "link close", onclick: () => { state.result = null; draw(); }, "aria-label": t("web.table.close") }, "✕"));
        panel.querySelector("h3").prepend(t("web.table.hand_prefix", { hand: state.result.hand }), " ");
        panel.append(reviewLink(state.result.hand));
        page.append(h("div", { class: "result-wrap" }, panel, state.ledger ? ledgerChart(state.ledger, state.names) : null));
      }
    }
    if (doc.phase === "finished" && doc.scores) {
      const panel = drawResult(doc, ctx);
      panel?.append(reviewLink(view.hand_no));
      page.append(h("div", { class: "result-wrap" }, panel, state.ledger ? ledgerChart(state.ledger, state.names) : null));
    }
    if (idle) page.append(...controls);
    if (keep) page.querySelector(`[data-card="${keep}"]:not([disabled])`)?.focus();
  }

  /** The hand shown in a result panel: the one just ended, or the last of a finished match. */
  function reviewedHand() {
    const view = state.view;
    if (!view) return null;
    if (docOf(view).phase === "finished" && docOf(view).scores) return view.hand_no;
    return state.result?.hand ?? null;
  }

  /** The way from a result panel to the hand's review: every hand open, card by card. */
  function reviewLink(hand) {
    return h("p", { class: "review-open" }, h("a", { class: "button", href: `#/r/${tableId}/${hand}?as=audit`, "data-action": "review",
      title: t("web.review.open_title"), "aria-keyshortcuts": "R" }, t("web.review.open")));
  }

  function onKey(event) {
    if (!state.view || event.target.closest?.("input, select, textarea")) return;
    if ((event.key === "r" || event.key === "R") && !event.ctrlKey && !event.metaKey && !event.altKey && reviewedHand() !== null) {
      event.preventDefault();
      location.hash = `#/r/${tableId}/${reviewedHand()}?as=audit`;
      return;
    }
    if ((event.key === "h" || event.key === "H") && !event.ctrlKey && !event.metaKey && !event.altKey && canHint()) {
      event.preventDefault();
      askHint();
      return;
    }
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

// The replay viewer: any ended hand, step by step (card by card), as a seat saw it, as a
// spectator, or as the audit view; the deal's commitment checked in the browser.

import { get } from "./api.js";
import { cardText, drawFelt, drawResult } from "./board.js";
import { cardElement, isMitigati, sortHand, SUIT_SYMBOL } from "./cards.js";
import { checkDeal, seenCommitment } from "./commit.js";
import { clear, h, toast } from "./dom.js";

function describeCommand(command, game) {
  if (!command) return "The deal";
  switch (command.type) {
    case "bid": return `bids ${command.points} ${command.trump === "NT" ? "NT" : SUIT_SYMBOL[command.trump]}`;
    case "pass": return "passes";
    case "discard": return `discards ${(command.cards || []).length} cards`;
    case "change_trump": return `changes trump to ${command.trump === "NT" ? "NT" : SUIT_SYMBOL[command.trump]}`;
    case "call_friend": return `calls ${Array.isArray(command.friend) ? command.friend.join(" + ") : command.friend === "none" ? "no friend" : command.friend === "first_trick" ? "the first trick's winner" : cardText(command.friend, game)}`;
    case "play": return `plays ${cardText(command.card, game)}${command.suit ? ` naming ${SUIT_SYMBOL[command.suit]}` : ""}${command.joker_call ? ", calling the Joker" : ""}`;
    case "bargain": return `${command.action}${command.amount != null ? ` ${command.amount}` : ""}`;
    case "declare": return command.combinations?.length ? `declares ${command.combinations.join(", ")}` : "declares nothing";
    default: return command.type;
  }
}

/** In the audit view, what each seat still holds at this step: dealt, minus played; the declarer's kitty in, discards out. */
function remainingHands(doc, players) {
  if (!doc.dealt) return null;
  const hands = doc.dealt.map((cards) => [...cards]);
  if (doc.declarer !== null && doc.declarer !== undefined && doc.kitty && doc.discards) {
    hands[doc.declarer] = hands[doc.declarer].concat(doc.kitty).filter((c) => !doc.discards.includes(c));
  }
  const played = [...(doc.tricks || []), ...(doc.trick ? [doc.trick] : [])];
  for (const trick of played) {
    trick.cards.forEach((card, i) => {
      const seat = (trick.leader + i) % players;
      const at = hands[seat].indexOf(card);
      if (at >= 0) hands[seat].splice(at, 1);
    });
  }
  return hands;
}

export function showReplay(root, tableId, handNo, asParam) {
  const page = h("div", { class: "replay-page" });
  root.append(page);
  const state = { steps: [], index: 0, file: null, table: null, hands: [], as: asParam ?? "audit", deal: null, check: null };
  let alive = true;

  async function load() {
    try {
      const [table, hands] = await Promise.all([
        get(`/tables/${tableId}`, { auth: false }),
        get(`/tables/${tableId}/hands`, { auth: false }),
      ]);
      state.table = table;
      state.hands = hands.hands;
      const [file, replay] = await Promise.all([
        get(`/tables/${tableId}/hands/${handNo}`, { auth: false }),
        get(`/tables/${tableId}/hands/${handNo}/replay?as=${encodeURIComponent(state.as)}`, { auth: false }),
      ]);
      state.file = file;
      state.steps = replay.steps;
      state.deal = replay.deal ?? file.deal ?? null;
      state.index = 0;
      if (alive) draw();
    } catch (error) {
      clear(page);
      page.append(h("p", { class: "panel" }, error.message, " ", h("a", { href: `#/t/${tableId}` }, "back to the table")));
    }
  }

  function names() {
    return (state.table?.seats || []).map((s) => (s.bot ? (s.name ?? "bot") : s.name ?? `Seat ${s.seat}`));
  }

  async function verify() {
    const first = state.steps[0]?.view;
    const audit = state.as === "audit" ? first : null;
    const seen = seenCommitment(tableId, handNo);
    if (!state.deal) {
      state.check = { ok: false, problems: ["this server's replay does not reveal the deal's order and salt, so the commitment cannot be checked here"] };
    } else {
      const result = await checkDeal({ ...state.deal, dealt: audit?.dealt ?? state.file?.hands, kitty: audit?.kitty ?? state.file?.kitty });
      if (seen && seen !== state.deal.commitment) result.problems.push("the commitment revealed is not the one this browser saw before the bidding");
      result.ok = result.problems.length === 0;
      state.check = result;
    }
    draw();
  }

  function go(index) {
    state.index = Math.max(0, Math.min(state.steps.length - 1, index));
    draw();
  }

  function draw() {
    clear(page);
    const game = state.table?.game ?? state.file?.rules ?? "mighty-5";
    const players = state.table?.seats.length ?? 5;
    const step = state.steps[state.index];
    const seatNo = /^\d+$/.test(state.as) ? Number(state.as) : null;
    const asSelect = h("select", { name: "as", "data-replay": "as", onchange: (e) => { location.hash = `#/r/${tableId}/${handNo}?as=${e.target.value}`; } },
      Array.from({ length: players }, (_, i) => h("option", { value: i, selected: state.as === String(i) }, `as ${names()[i] ?? `seat ${i}`}`)),
      h("option", { value: "spectator", selected: state.as === "spectator" }, "as a spectator"),
      h("option", { value: "audit", selected: state.as === "audit" }, "audit (everything)"));
    const handSelect = h("select", { name: "hand", "data-replay": "hand", onchange: (e) => { location.hash = `#/r/${tableId}/${e.target.value}?as=${state.as}`; } },
      state.hands.filter((x) => x.status !== "playing").map((x) => h("option", { value: x.hand, selected: x.hand === handNo }, `hand ${x.hand} (${x.status})`)));
    page.append(h("div", { class: "table-head" },
      h("div", {}, h("strong", {}, `Replay: ${state.table?.name || tableId}`), " ", h("span", { class: "tag" }, game), " ", handSelect, " ", asSelect),
      h("div", { class: "controls" }, h("a", { class: "button", href: `#/t/${tableId}` }, "Table"))));
    if (!step) { page.append(h("p", { class: "muted" }, "Loading…")); return; }
    const command = step.index === null ? null : state.file?.commands?.[step.index];
    const who = step.seat === null ? "" : `${names()[step.seat] ?? `Seat ${step.seat}`} `;
    const doc = step.view;
    const ctx = { game, players, me: seatNo ?? 0, names: names() };
    page.append(h("div", { class: "felt-wrap" }, drawFelt(doc, ctx)));
    page.append(h("div", { class: "replay-controls" },
      h("button", { "data-replay": "first", onclick: () => go(0), "aria-label": "first step" }, "|◀"),
      h("button", { "data-replay": "prev", onclick: () => go(state.index - 1), "aria-label": "previous step" }, "◀"),
      h("input", { type: "range", min: 0, max: state.steps.length - 1, value: state.index, "aria-label": "step", oninput: (e) => go(Number(e.target.value)) }),
      h("button", { "data-replay": "next", onclick: () => go(state.index + 1), "aria-label": "next step" }, "▶"),
      h("button", { "data-replay": "last", onclick: () => go(state.steps.length - 1), "aria-label": "last step" }, "▶|"),
      h("span", { class: "step-text", "data-step": state.index }, `${state.index + 1}/${state.steps.length}: ${who}${describeCommand(command, game)}`)));
    if (doc.scores) page.append(h("div", { class: "result-wrap" }, drawResult(doc, ctx)));
    if (doc.hand) {
      page.append(h("div", { class: "hand replay-hand" }, sortHand(doc.hand, game).map((c) => cardElement(c, game))));
    }
    const remaining = state.as === "audit" && !isMitigati(game) ? remainingHands(doc, players) : null;
    if (remaining) {
      page.append(h("div", { class: "all-hands" }, remaining.map((cards, seat) =>
        h("div", { class: "row" }, h("span", { class: "who" }, names()[seat] ?? `Seat ${seat}`), sortHand(cards, game).map((c) => cardElement(c, game, { small: true }))))));
    }
    const commitment = state.deal?.commitment ?? seenCommitment(tableId, handNo);
    const check = state.check;
    page.append(h("section", { class: "panel proof", "data-proof": check ? (check.ok ? "ok" : "failed") : "unchecked" },
      h("h3", {}, "The deal's commitment"),
      h("p", {}, "Before the bidding the table published a hash of the card order and a secret salt; after the hand it reveals both. Your browser hashes them again."),
      commitment ? h("p", {}, h("code", { class: "hash" }, commitment)) : h("p", { class: "muted" }, "No commitment known for this hand."),
      h("button", { "data-replay": "verify", onclick: verify }, "Check the deal"),
      check ? h("p", { class: check.ok ? "ok" : "bad" }, check.ok ? "✔ The revealed deal matches the commitment and the cards dealt." : `✘ ${check.problems.join("; ")}`) : null));
  }

  function onKey(event) {
    if (event.target.closest?.("input, select")) return;
    if (event.key === "ArrowRight") go(state.index + 1);
    else if (event.key === "ArrowLeft") go(state.index - 1);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(state.steps.length - 1);
  }
  document.addEventListener("keydown", onKey);
  load().catch((error) => toast(error.message));
  return () => { alive = false; document.removeEventListener("keydown", onKey); };
}

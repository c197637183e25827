// The replay viewer: any ended hand, step by step (card by card), as a seat saw it, as a
// spectator, or as the audit view; the deal's commitment checked in the browser.

import { get } from "./api.js";
import { contractStrip, drawFelt, drawResult } from "./board.js";
import { cardElement, useGame } from "./cards.js";
import { checkDeal, seenCommitment } from "./commit.js";
import { clear, h, toast } from "./dom.js";
import { gameInfo, sortCards } from "./games.js";
import { fmtNumber, t } from "./i18n.js";

/** A step as the server says it: its command's label in the reader's language (the
 * sentence of a `legal` entry; docs/api.md, "Audit and replay"), the deal before any. */
function describeStep(step) {
  if (step.index === null) return t("web.step.deal");
  return step.label ?? step.type;
}

export function showReplay(root, tableId, handNo, asParam) {
  const page = h("div", { class: "replay-page" });
  root.append(page);
  const state = { steps: [], index: 0, file: null, table: null, hands: [], as: asParam ?? "audit", deal: null, check: null, info: null };
  let alive = true;

  async function load() {
    try {
      const [table, hands] = await Promise.all([
        get(`/tables/${tableId}`, { auth: false }),
        get(`/tables/${tableId}/hands`, { auth: false }),
      ]);
      state.table = table;
      state.hands = hands.hands;
      state.info = (await gameInfo(table.game).catch(() => null)) ?? null;
      useGame(state.info); // the cards' faces and names (cards.js)
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
      page.append(h("p", { class: "panel" }, error.message, " ", h("a", { href: `#/t/${tableId}` }, t("web.replay.back"))));
    }
  }

  function names() {
    return (state.table?.seats || []).map((s) => (s.bot ? (s.name ?? t("web.seat.bot")) : s.name ?? t("web.seat.n", { seat: s.seat })));
  }

  async function verify() {
    const first = state.steps[0]?.view;
    const audit = state.as === "audit" ? first : null;
    const seen = seenCommitment(tableId, handNo);
    if (!state.deal) {
      state.check = { ok: false, problems: [t("web.proof.not_revealed")] };
    } else {
      const result = await checkDeal({ ...state.deal, dealt: audit?.dealt ?? state.file?.hands, kitty: audit?.kitty ?? state.file?.kitty });
      if (seen && seen !== state.deal.commitment) result.problems.push(t("web.proof.not_seen"));
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
    const game = state.table?.game ?? state.file?.rules ?? "";
    const players = state.table?.seats.length ?? 5;
    const step = state.steps[state.index];
    const seatNo = /^\d+$/.test(state.as) ? Number(state.as) : null;
    const asSelect = h("select", { name: "as", "data-replay": "as", onchange: (e) => { location.hash = `#/r/${tableId}/${handNo}?as=${e.target.value}`; } },
      Array.from({ length: players }, (_, i) => h("option", { value: i, selected: state.as === String(i) }, t("web.replay.as", { name: names()[i] ?? t("web.seat.n", { seat: i }) }))),
      h("option", { value: "spectator", selected: state.as === "spectator" }, t("web.replay.as_spectator")),
      h("option", { value: "audit", selected: state.as === "audit" }, t("web.replay.audit")));
    const handSelect = h("select", { name: "hand", "data-replay": "hand", onchange: (e) => { location.hash = `#/r/${tableId}/${e.target.value}?as=${state.as}`; } },
      state.hands.filter((x) => x.status !== "playing").map((x) => h("option", { value: x.hand, selected: x.hand === handNo }, t("web.replay.hand", { hand: x.hand, status: t(`web.hand_status.${x.status}`) }))));
    page.append(h("div", { class: "table-head" },
      h("div", {}, h("strong", {}, t("web.replay.title", { name: state.table?.name || tableId })), " ", h("span", { class: "tag" }, game), " ", handSelect, " ", asSelect),
      h("div", { class: "controls" }, h("a", { class: "button", href: `#/t/${tableId}` }, t("web.replay.table")))));
    if (!step) { page.append(h("p", { class: "muted" }, t("web.loading"))); return; }
    const who = step.seat === null ? "" : `${names()[step.seat] ?? t("web.seat.n", { seat: step.seat })}: `;
    const doc = step.view;
    const ctx = { game, players, me: seatNo ?? 0, names: names() };
    page.append(h("div", { class: "felt-wrap" }, drawFelt(doc, ctx)), contractStrip(doc, ctx));
    page.append(h("div", { class: "replay-controls" },
      h("button", { "data-replay": "first", onclick: () => go(0), "aria-label": t("web.replay.first") }, "|◀"),
      h("button", { "data-replay": "prev", onclick: () => go(state.index - 1), "aria-label": t("web.replay.previous") }, "◀"),
      h("input", { type: "range", min: 0, max: state.steps.length - 1, value: state.index, "aria-label": t("web.replay.step"), oninput: (e) => go(Number(e.target.value)) }),
      h("button", { "data-replay": "next", onclick: () => go(state.index + 1), "aria-label": t("web.replay.next") }, "▶"),
      h("button", { "data-replay": "last", onclick: () => go(state.steps.length - 1), "aria-label": t("web.replay.last") }, "▶|"),
      h("span", { class: "step-text", "data-step": state.index }, `${state.index + 1}/${state.steps.length}: ${who}${describeStep(step)}`)));
    if (doc.scores) page.append(h("div", { class: "result-wrap" }, drawResult(doc, ctx)));
    if (doc.hand) {
      page.append(h("div", { class: "hand replay-hand" }, sortCards(doc.hand, state.info).map((c) => cardElement(c, game))));
    }
    // the review: every seat's cards open, what it still holds (docs/api.md, "Audit and
    // replay": `remaining`) and what it has parted with so far (`played`), each played card
    // dimmed with the number of the trick it went to, a buried one marked so
    const remaining = state.as === "audit" ? doc.remaining : null;
    if (remaining) {
      page.append(h("div", { class: "all-hands", "data-review": state.index }, remaining.map((cards, seat) => {
        const marks = doc.played?.[seat] ?? [];
        const held = sortCards(cards, state.info).map((c) => cardElement(c, game, { small: true }));
        const gone = marks.map((mark) => {
          const el = cardElement(mark.card, game, { small: true });
          el.classList.add("played");
          el.dataset.played = mark.card;
          const text = mark.trick === null ? t("web.review.buried") : t("web.review.played_to", { n: mark.trick });
          el.title = `${el.title} · ${text}`;
          el.setAttribute("aria-label", el.title);
          el.append(h("span", { class: "trick-no", "data-trick": mark.trick ?? "buried" }, mark.trick === null ? "✕" : fmtNumber(mark.trick)));
          return el;
        });
        return h("div", { class: "row", "data-review-seat": seat }, h("span", { class: "who" }, names()[seat] ?? t("web.seat.n", { seat })),
          held, gone.length ? h("span", { class: "gone" }, gone) : null);
      })));
    }
    const commitment = state.deal?.commitment ?? seenCommitment(tableId, handNo);
    const check = state.check;
    page.append(h("section", { class: "panel proof", "data-proof": check ? (check.ok ? "ok" : "failed") : "unchecked" },
      h("h3", {}, t("web.proof.title")),
      h("p", {}, t("web.proof.about")),
      commitment ? h("p", {}, h("code", { class: "hash" }, commitment)) : h("p", { class: "muted" }, t("web.proof.none")),
      h("button", { "data-replay": "verify", onclick: verify }, t("web.proof.check")),
      check ? h("p", { class: check.ok ? "ok" : "bad" }, check.ok ? `✔ ${t("web.proof.ok")}` : `✘ ${check.problems.join("; ")}`) : null));
  }

  function onKey(event) {
    if (event.target.closest?.("input, select")) return;
    if (event.key === "ArrowRight") go(state.index + 1);
    else if (event.key === "ArrowLeft") go(state.index - 1);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(state.steps.length - 1);
    else return;
    event.preventDefault(); // the step, not the page's scroll
  }
  document.addEventListener("keydown", onKey);
  load().catch((error) => toast(error.message));
  return () => { alive = false; document.removeEventListener("keydown", onKey); };
}

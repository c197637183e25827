// Card notation (docs/hand-files.md): Mighty's `AS`, `TH`, `JK`, two packs' `AS#2`, `JK3`;
// Mitigati's tarot `KS`, `TC` (ten of cups), trumps `T1`…`T21`, the Fool `FOOL`.

import { h } from "./dom.js";
import { t } from "./i18n.js";

export const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣", NT: "NT" };
const RANK_NAME = { T: "10" };
// the catalog's rank keys (mighty.rank.*, mitigati.rank.*): the server's words for cards
const RANK_KEY = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
const TAROT_RANK_KEY = { T: "10", F: "fante", N: "cavallo", Q: "queen", K: "king" };
const TAROT_SYMBOL = { D: "🪙", C: "🏆", B: "🥢", S: "🗡" };
const TAROT_RANK = { T: "10", F: "Fante", N: "Cavallo", Q: "Q", K: "K" };

export function isMitigati(game) { return game === "mitigati"; }

/** The card's name without the pack mark (`AS#2` -> `AS`, `JK3` -> `JK`). */
export function base(card) {
  const plain = card.split("#")[0];
  return plain.startsWith("JK") ? "JK" : plain;
}

export function suitOf(card, game) {
  if (isMitigati(game)) {
    if (card === "FOOL") return null;
    if (/^T\d+$/.test(card)) return "T";
    return card[1];
  }
  const b = base(card);
  return b === "JK" ? null : b[1];
}

export function rankOf(card, game) {
  if (isMitigati(game)) {
    if (card === "FOOL") return "Fool";
    if (/^T\d+$/.test(card)) return card.slice(1);
    return card[0];
  }
  const b = base(card);
  return b === "JK" ? "JK" : b[0];
}

export function isRed(card, game) {
  const suit = suitOf(card, game);
  if (isMitigati(game)) return suit === "D" || suit === "C";
  return suit === "H" || suit === "D";
}

/** Mighty's point cards (rules §1): A K Q J 10. */
export function isPointCard(card) {
  const b = base(card);
  return b !== "JK" && "TJQKA".includes(b[0]);
}

/** A name a screen reader can say. */
export function cardLabel(card, game) {
  if (isMitigati(game)) {
    if (card === "FOOL") return t("mitigati.fool");
    if (/^T\d+$/.test(card)) return t("mitigati.trump", { n: Number(card.slice(1)) });
    return t("mitigati.card", { rank: t(`mitigati.rank.${TAROT_RANK_KEY[card[0]] ?? card[0]}`), suit: t(`mitigati.card_suit.${card[1]}`) });
  }
  const b = base(card);
  if (b === "JK") return t("mighty.joker");
  return t("mighty.card", { rank: t(`mighty.rank.${RANK_KEY[b[0]] ?? b[0]}`), suit: t(`mighty.card_suit.${b[1]}`) });
}

/** A card as an element: rank and suit symbol, red or black. */
export function cardElement(card, game, { small = false } = {}) {
  const el = document.createElement("span");
  el.className = "card" + (small ? " small" : "");
  const suit = suitOf(card, game);
  const rank = rankOf(card, game);
  el.setAttribute("aria-label", cardLabel(card, game));
  el.title = cardLabel(card, game);
  if (isRed(card, game)) el.classList.add("red");
  let face;
  let symbol;
  if (!isMitigati(game)) {
    if (rank === "JK") { el.classList.add("joker"); face = "JK"; symbol = "★"; } else {
      face = RANK_NAME[rank] ?? rank; symbol = SUIT_SYMBOL[suit];
    }
  } else if (card === "FOOL") { el.classList.add("joker"); face = t("web.card.fool_short"); symbol = "☺"; } else if (suit === "T") {
    el.classList.add("trump"); face = rank; symbol = "✦";
  } else {
    face = TAROT_RANK[rank] === "Fante" ? "F" : TAROT_RANK[rank] === "Cavallo" ? "N" : (TAROT_RANK[rank] ?? rank);
    symbol = TAROT_SYMBOL[suit];
  }
  const pack = card.includes("#") ? card.split("#")[1] : null;
  // built from text nodes, never from HTML: a card name comes from the server
  el.append(h("span", { class: "rank" }, face), h("span", { class: "suit" }, symbol ?? ""));
  if (pack) el.append(h("span", { class: "pack" }, pack));
  return el;
}

export function cardBack({ small = false } = {}) {
  const el = document.createElement("span");
  el.className = "card back" + (small ? " small" : "");
  el.setAttribute("aria-hidden", "true");
  return el;
}

export function trumpLabel(trump) {
  return trump === "NT" ? t("mighty.suit.NT") : `${SUIT_SYMBOL[trump] ?? trump} ${t(`mighty.suit.${trump}`)}`.trim();
}

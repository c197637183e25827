// Card notation (docs/hand-files.md): Mighty's `AS`, `TH`, `JK`, two packs' `AS#2`, `JK3`;
// Mitigati's tarot `KS`, `TC` (ten of cups), trumps `T1`…`T21`, the Fool `FOOL`.

export const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣", NT: "NT" };
export const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs", NT: "no trump" };
const RANK_NAME = { T: "10" };
const MIGHTY_RANKS = "23456789TJQKA";
// the hand's suit order alternates colours so neighbouring suits are easy to tell apart
const MIGHTY_SUIT_ORDER = ["S", "H", "C", "D"];

const TAROT_SUIT = { D: "coins", C: "cups", B: "batons", S: "swords" };
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
    if (card === "FOOL") return "the Fool";
    if (/^T\d+$/.test(card)) return `trump ${card.slice(1)}`;
    return `${TAROT_RANK[card[0]] ?? card[0]} of ${TAROT_SUIT[card[1]]}`;
  }
  const b = base(card);
  if (b === "JK") return "Joker";
  return `${RANK_NAME[b[0]] ?? b[0]} of ${SUIT_NAME[b[1]]}`;
}

/** The hand sorted by suit (Jokers first), high cards first within a suit. */
export function sortHand(cards, game) {
  const key = (card) => {
    if (isMitigati(game)) {
      if (card === "FOOL") return [0, 0];
      if (/^T\d+$/.test(card)) return [1, -Number(card.slice(1))];
      return [2 + "DCBS".indexOf(card[1]), -"123456789TFNQK".indexOf(card[0])];
    }
    const b = base(card);
    if (b === "JK") return [0, 0];
    return [1 + MIGHTY_SUIT_ORDER.indexOf(b[1]), -MIGHTY_RANKS.indexOf(b[0])];
  };
  return [...cards].sort((x, y) => {
    const a = key(x); const b = key(y);
    return a[0] - b[0] || a[1] - b[1] || x.localeCompare(y);
  });
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
  } else if (card === "FOOL") { el.classList.add("joker"); face = "Fool"; symbol = "☺"; } else if (suit === "T") {
    el.classList.add("trump"); face = rank; symbol = "✦";
  } else {
    face = TAROT_RANK[rank] === "Fante" ? "F" : TAROT_RANK[rank] === "Cavallo" ? "N" : (TAROT_RANK[rank] ?? rank);
    symbol = TAROT_SYMBOL[suit];
  }
  const pack = card.includes("#") ? card.split("#")[1] : null;
  el.innerHTML = `<span class="rank">${face}</span><span class="suit">${symbol}</span>` +
    (pack ? `<span class="pack">${pack}</span>` : "");
  return el;
}

export function cardBack({ small = false } = {}) {
  const el = document.createElement("span");
  el.className = "card back" + (small ? " small" : "");
  el.setAttribute("aria-hidden", "true");
  return el;
}

export function trumpLabel(trump) {
  return trump === "NT" ? "no trump" : `${SUIT_SYMBOL[trump] ?? trump} ${SUIT_NAME[trump] ?? ""}`.trim();
}

// Cards as the games' catalogue describes them (GET /api/v1/games, games.js): each card's
// name, suit, rank as printed, the picture on its face (`symbol`, drawn by symbols.js) and
// its colour. The client knows no game: a card it has no catalogue entry for yet is shown
// by its notation until the catalogue arrives (the table and the replay draw again then).

import { h } from "./dom.js";
import { symbol } from "./symbols.js";

const known = new Map(); // game name -> {cards, suits, terms: Maps from name to the catalogue's entry}

/** Remember a game of the catalogue (games.js's `gameInfo`), so cards of it can be drawn. */
export function useGame(info) {
  if (!info || known.get(info.game)?.info === info) return;
  known.set(info.game, {
    info,
    cards: new Map(info.cards.map((c) => [c.card, c])),
    suits: new Map(info.suits.map((s) => [s.suit, s])),
    terms: new Map((info.terms ?? []).map((x) => [x.term, x])),
  });
}

/** The catalogue's entry of `card` in `game`, or undefined while it is not known. */
export function cardEntry(card, game) { return known.get(game)?.cards.get(card); }

/** The catalogue's entry of a suit (`S`, `NT`, …) in `game`, or undefined. */
export function suitEntry(suit, game) { return known.get(game)?.suits.get(suit); }

/** A name a screen reader can say: the catalogue's label, in the page's language. */
export function cardLabel(card, game) { return cardEntry(card, game)?.label ?? card; }

/** A suit as text (its name), for sentences. */
export function suitText(suit, game) { return suitEntry(suit, game)?.label ?? suit; }

/** Another name a view holds (a combination declared), as the catalogue's `terms` say it. */
export function termText(term, game) { return known.get(game)?.terms.get(term)?.label ?? term; }

/** A suit as a mark: its picture (with its name for a screen reader), or its short name
 * where it has none (the catalogue's `short`: no trump). */
export function suitMark(suit, game) {
  const entry = suitEntry(suit, game);
  if (entry?.symbol) {
    return h("span", { class: `suit-mark${entry.red ? " red" : ""}`, title: entry.label }, symbol(entry.symbol, { label: entry.label }));
  }
  return h("span", { class: "suit-mark", title: entry?.label ?? suit }, entry?.short ?? entry?.label ?? suit);
}

/** Whether a card won in a trick is laid face up before its winner (the catalogue's `face_up`). */
export function isFaceUp(card, game) { return cardEntry(card, game)?.face_up === true; }

/** A card as an element: rank and the picture of its suit, red or black. */
export function cardElement(card, game, { small = false } = {}) {
  const entry = cardEntry(card, game);
  const el = document.createElement("span");
  el.className = "card" + (small ? " small" : "");
  el.setAttribute("aria-label", cardLabel(card, game));
  el.title = cardLabel(card, game);
  if (entry?.red) el.classList.add("red");
  if (entry && entry.suit === null) el.classList.add("joker");
  const rank = entry ? entry.rank : card;
  // built from text nodes and SVG, never from HTML: a card name comes from the server
  el.append(h("span", { class: "rank" }, rank.length > 3 ? "" : rank), h("span", { class: "suit" }, entry?.symbol ? symbol(entry.symbol) : ""));
  const pack = card.includes("#") ? card.split("#")[1] : null;
  if (pack) el.append(h("span", { class: "pack" }, pack));
  return el;
}

export function cardBack({ small = false } = {}) {
  const el = document.createElement("span");
  el.className = "card back" + (small ? " small" : "");
  el.setAttribute("aria-hidden", "true");
  return el;
}

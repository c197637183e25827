// The games as the server describes them (GET /api/v1/games, docs/api.md "Games, labels
// and languages"): names, options, cards with their `order`, phases. The client knows no
// game's rules: it sorts a hand by the cards' `order`, or by the view's `hand_order`.

import { get } from "./api.js";

let catalogue = null;

/** Every game the server offers (asked once a page). */
export async function games() {
  if (!catalogue) catalogue = get("/games", { auth: false }).catch((error) => { catalogue = null; throw error; });
  return catalogue;
}

/** Forget the catalogue: its names are in the language it was asked in. */
export function forgetGames() { catalogue = null; }

/** One game of the catalogue by its name (`mighty-5`, `mitigati`), or undefined. */
export async function gameInfo(name) {
  return (await games()).games.find((g) => g.game === name);
}

const orders = new WeakMap();

/** The cards sorted by the game's `order` (the rules' order of a hand); as given while
 * the catalogue is not known yet (the server sends a hand in that order already). */
export function sortCards(cards, info) {
  if (!info) return [...cards];
  if (!orders.has(info)) orders.set(info, new Map(info.cards.map((c) => [c.card, c.order])));
  const order = orders.get(info);
  return [...cards].sort((a, b) => (order.get(a) ?? 1e9) - (order.get(b) ?? 1e9));
}

/** A view's hand in the order to show it: its `hand_order` when the hand decides it
 * (Mighty: the trump suit first), else sorted by the cards' `order`. */
export function handInOrder(view, info) {
  return view.hand_order ?? sortCards(view.hand || [], info);
}

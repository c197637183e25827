// The felt: seats around the table, the current trick laid out in front of who played
// each card, the contract, the kitty, tricks won and the defenders' face-up point cards.
// It draws a view document (domain/mighty/views.py, domain/mitigati/views.py) and knows no API: the live table and the
// replay viewer both use it.

import { cardBack, cardElement, cardLabel, isFaceUp, suitEntry, suitMark, suitText, termText } from "./cards.js";
import { h } from "./dom.js";
import { fmtNumber, t } from "./i18n.js";

/** Where seat `seat` sits, in percent of the felt, with `me` at the bottom. */
export function seatPosition(seat, me, players) {
  const relative = (seat - (me ?? 0) + players) % players;
  const angle = Math.PI / 2 + (relative * 2 * Math.PI) / players;
  const narrow = window.innerWidth < 760; // a phone: the felt is tall, keep the seats inside it
  return { x: 50 + (narrow ? 33 : 38) * Math.cos(angle), y: 50 + (narrow ? 40 : 38) * Math.sin(angle), angle };
}

export function callLabel(call, game) {
  if (call === null || call === undefined) return "";
  if (Array.isArray(call)) return call.map((c) => callLabel(c, game)).join(" + ");
  if (call === "first_trick") return t("web.friend.first_trick");
  if (call === "none") return t("web.friend.none");
  return cardText(call, game);
}

export function cardText(card, game) {
  return cardLabel(card, game);
}

/** An auction entry (seat, points, trump; 0 points: a pass) as an element. */
export function bidMark(entry, game) {
  const [, points, trump] = entry;
  return points === 0 ? h("span", { class: "bid-mark" }, t("web.bid.pass")) : h("span", { class: "bid-mark" }, `${fmtNumber(points)} `, suitMark(trump, game));
}

/** Tricks each seat won, and the cards among them laid face up (the catalogue's `face_up`:
 * Mighty's point cards, §5). */
export function wonBy(doc, players, game) {
  const tricks = Array(players).fill(0);
  const points = Array.from({ length: players }, () => []);
  for (const trick of doc.tricks || []) {
    if (trick.winner === null || trick.winner === undefined) continue;
    tricks[trick.winner] += 1;
    for (const card of trick.cards) if (isFaceUp(card, game)) points[trick.winner].push(card);
  }
  return { tricks, points };
}

/** The declarer's side's points so far: the face-up points (`face_up_points`) of the
 * declarer and of every friend known to the reader; null when the view counts none. */
export function sidePoints(doc) {
  if (!Array.isArray(doc.face_up_points) || doc.declarer === null || doc.declarer === undefined) return null;
  let sum = 0;
  for (const seat of declarerSide(doc)) sum += doc.face_up_points[seat] ?? 0;
  return sum;
}

export function declarerSide(doc) {
  const side = new Set();
  if (doc.declarer !== null && doc.declarer !== undefined) side.add(doc.declarer);
  if (doc.friend_known && doc.friend !== null && doc.friend !== undefined) side.add(doc.friend);
  for (const f of Array.isArray(doc.friends) ? doc.friends : []) side.add(f);
  return side;
}

/** A seat by the felt's left or right edge (" west", " east"), else "": where many seats
 * sit round the felt, a side seat's cards keep out of its neighbour's way (style.css). */
function edgeOf(angle) {
  const cos = Math.cos(angle);
  return cos < -0.5 ? " west" : cos > 0.5 ? " east" : "";
}

/**
 * Draw the felt. `ctx`: {game, players, me (seat or null), names: [..], totals: [..]}.
 */
export function drawFelt(doc, ctx) {
  const { game, players, me } = ctx;
  const felt = h("div", { class: `felt players-${players}` });
  const won = wonBy(doc, players, game);
  const side = declarerSide(doc);
  const lastBid = {};
  for (const entry of doc.auction || []) lastBid[entry[0]] = entry;
  const said = {};
  for (const entry of doc.bargaining?.said || []) said[entry[0]] = entry;

  for (let seat = 0; seat < players; seat += 1) {
    const pos = seatPosition(seat, me, players);
    const badges = [];
    if (doc.dealer === seat) badges.push(h("span", { class: "badge dealer", title: t("web.badge.dealer") }, t("web.badge.dealer_short")));
    if (doc.declarer === seat) badges.push(h("span", { class: "badge declarer", title: t("web.badge.declarer") }, `★ ${t("web.badge.declarer")}`));
    // a friend just revealed gets a moment of emphasis (ctx.revealed: the seats, style.css)
    if (side.has(seat) && doc.declarer !== seat) badges.push(h("span", { class: `badge friend${ctx.revealed?.includes(seat) ? " revealed" : ""}`, "data-friend": seat }, t("web.badge.friend")));
    if (!doc.friend_known && doc.friend === seat && me === seat) badges.push(h("span", { class: "badge friend secret" }, t("web.badge.you_friend")));
    const turn = doc.to_act === seat;
    const size = doc.hand_sizes?.[seat] ?? 0;
    const backs = h("div", { class: "backs" }, seat === me ? null : Array.from({ length: Math.min(size, 8) }, () => cardBack({ small: true })));
    const info = [];
    if (doc.tricks?.length || doc.phase === "play" || doc.phase === "finished") {
      info.push(h("span", { class: "tricks", title: t("web.felt.tricks_won") }, t("web.felt.tricks", { count: won.tricks[seat] })));
    }
    let bubble = null;
    if (doc.phase === "bidding" && lastBid[seat]) bubble = h("span", { class: "bubble" }, bidMark(lastBid[seat], game));
    if (said[seat]) bubble = h("span", { class: "bubble" }, `${said[seat][1]}${said[seat][2] != null ? ` ${said[seat][2]}` : ""}`);
    const faceUp = !side.has(seat) && won.points[seat].length
      ? h("div", { class: "face-up", title: t("web.felt.face_up"), "data-points": seat }, won.points[seat].map((c) => cardElement(c, game, { small: true })))
      : null;
    const total = ctx.totals?.[seat];
    // the nameplate sits on the seat's point; what the seat shows besides (badges, then its
    // cards: the backs and the face-up cards side by side, one row) grows from it towards
    // the centre, so a seat's cards never reach the next seat's nameplate
    felt.append(h("div", {
      class: `seat${turn ? " turn" : ""}${seat === me ? " mine" : ""}${Math.sin(pos.angle) > 0.01 ? " lower" : ""}${edgeOf(pos.angle)}`,
      style: { left: `${pos.x}%`, top: `${pos.y}%` },
      "data-seat": seat,
    },
    h("div", { class: "nameplate", title: ctx.names?.[seat] ?? null },
      h("span", { class: "name" }, ctx.plates?.[seat]?.name ?? ctx.names?.[seat] ?? t("web.seat.n", { seat })),
      ctx.plates?.[seat] ? h("span", { class: "level" }, ctx.plates[seat].level) : null,
      ctx.away?.includes(seat) ? h("span", { class: "away", title: t("web.seat.away_title") }, t("web.seat.away")) : null,
      total !== undefined ? h("span", { class: "total", title: t("web.felt.match_total") }, fmtNumber(total, { signed: true })) : null),
    h("div", { class: "badges" }, badges, info, bubble),
    h("div", { class: "held" }, backs, faceUp)));
  }

  const center = h("div", { class: "center" });
  center.append(contractLine(doc, ctx));
  if (doc.kitty && doc.phase !== "finished" && (doc.phase === "exchange" || doc.phase === "bidding")) {
    center.append(h("div", { class: "kitty" }, h("span", { class: "label" }, t("web.felt.kitty")), doc.kitty.map((c) => cardElement(c, game, { small: true }))));
  }
  felt.append(center);
  felt.append(drawTrick(doc, ctx));
  return felt;
}

/** The contract, the friend call and the rest said aloud, as on the felt's centre: on a
 * phone it is drawn in a strip under the felt instead (`contractStrip`), where the trick's
 * cards cannot cover it. */
export function contractStrip(doc, ctx) {
  const line = contractLine(doc, ctx);
  return h("div", { class: "contract-strip" }, line.childNodes.length ? line : null);
}

function contractLine(doc, ctx) {
  const { game } = ctx;
  const parts = [];
  // each part is drawn when the view holds its field: the client names no game
  if (doc.bargaining) {
    const b = doc.bargaining;
    parts.push(h("div", {}, t("web.felt.bargaining", { session: b.session })));
    if (b.offer != null) parts.push(h("div", { class: "muted" }, t("web.felt.offers", { seat: b.payer, amount: b.offer })));
    if (b.ask != null) parts.push(h("div", { class: "muted" }, t("web.felt.asks", { seat: b.seller, amount: b.ask })));
  }
  if (doc.declarations?.length) {
    parts.push(h("div", { class: "declarations" }, doc.declarations.map((d) =>
      h("div", {}, `${ctx.names?.[d.seat] ?? t("web.seat.n", { seat: d.seat })}: ${termText(d.name, game)} (${fmtNumber(d.value)})`,
        d.shown ? h("span", { class: "shown" }, d.shown.map((c) => cardElement(c, game, { small: true }))) : null))));
  }
  if (doc.abandoned) parts.push(h("div", {}, t("web.felt.bargained_away")));
  if (doc.contract) {
    const [points, trump] = doc.contract;
    // the suit's picture and its name; a suit without a picture (no trump) is its name
    const named = suitEntry(trump, game)?.symbol ? [" ", h("span", { class: "trump-name" }, suitText(trump, game))] : null;
    parts.push(h("div", { class: "big" }, `${fmtNumber(points)} `, suitMark(trump, game), named));
    parts.push(h("div", { class: "muted" }, t("web.felt.by", { name: ctx.names?.[doc.declarer] ?? t("web.seat.n", { seat: doc.declarer }) })));
    const side = doc.phase === "play" ? sidePoints(doc) : null;
    if (side !== null) {
      parts.push(h("div", { class: "side-points", "data-side-points": side }, t("web.felt.side_points", { count: side, contract: fmtNumber(points) })));
    }
  } else if (doc.phase === "bidding" && doc.auction) {
    parts.push(h("div", { class: "big" }, t("web.felt.bidding")));
  } else if (doc.redeal) {
    parts.push(h("div", { class: "big" }, doc.redeal === "misdeal" ? t("web.felt.misdeal") : t("web.felt.all_passed")));
  }
  if (doc.friend_call) {
    parts.push(h("div", {}, t("web.felt.friend"), " ", callLabel(doc.friend_call[1] ?? doc.friend_call[0], game),
      doc.friend_known && doc.friend !== null && doc.friend !== undefined ? ` → ${ctx.names?.[doc.friend] ?? doc.friend}` : ""));
  }
  if (Array.isArray(doc.friend_calls) && doc.friend_calls.length) parts.push(h("div", {}, t("web.felt.calls"), " ", callLabel(doc.friend_calls, game)));
  if (doc.lead_suit) parts.push(h("div", { class: "muted" }, t("web.felt.advised_lead", { suit: suitText(doc.lead_suit, game) })));
  if (doc.led_suit) parts.push(h("div", { class: "muted" }, t("web.felt.led", { suit: suitText(doc.led_suit, game) })));
  if (doc.joker_call === true) parts.push(h("div", { class: "callout" }, t("web.felt.joker_called")));
  return h("div", { class: "contract" }, parts);
}

/** The trick in play, each card in front of the seat that played it; else the last one. */
function drawTrick(doc, ctx) {
  const { game, players, me } = ctx;
  let trick = doc.trick;
  let last = false;
  // between tricks, and once the hand is over, the last trick stays on the felt
  if (!trick && doc.tricks?.length && (doc.phase === "play" || doc.phase === "finished")) { trick = doc.tricks[doc.tricks.length - 1]; last = true; }
  const el = h("div", { class: `trick${last ? " last" : ""}`, "data-trick": trick ? trick.cards.length : 0 });
  if (!trick) return el;
  trick.cards.forEach((card, i) => {
    const seat = playedBy(trick, i, players);
    const pos = seatPosition(seat, me, players);
    const c = cardElement(card, game);
    c.dataset.playedBy = seat;
    if (last && trick.winner === seat) c.classList.add("winner");
    // toward its seat by the felt's trick radius (style.css: closer in on a low felt or a phone)
    const toward = { "--cos": Math.cos(pos.angle).toFixed(4), "--sin": Math.sin(pos.angle).toFixed(4), zIndex: i + 1 };
    el.append(h("div", { class: "played", style: toward }, c));
  });
  return el;
}

/** The hand's result: the contract made or failed, the breakdown the score holds (the
 * contract, the points the declarer's side took against it, who was the friend), each
 * seat's points taken and score, and the last trick of the hand. */
export function drawResult(doc, ctx) {
  const { game, players } = ctx;
  if (!doc.scores) return null;
  const name = (seat) => ctx.names?.[seat] ?? t("web.seat.n", { seat });
  const side = declarerSide({ ...doc, friend_known: true });
  const taken = doc.points ?? (Array.isArray(doc.face_up_points) && doc.face_up_points.length ? doc.face_up_points : null);
  const rows = [];
  for (let seat = 0; seat < players; seat += 1) {
    const score = doc.scores[seat];
    rows.push(h("tr", { class: score > 0 ? "plus" : score < 0 ? "minus" : "", "data-result-seat": seat },
      h("td", {}, name(seat), seat === doc.declarer ? " ★" : "", side.has(seat) && seat !== doc.declarer ? ` (${t("web.badge.friend")})` : ""),
      taken ? h("td", { class: "num" }, fmtNumber(taken[seat])) : null,
      h("td", { class: "num" }, fmtNumber(score, { signed: true }))));
  }
  let headline;
  if (doc.abandoned) headline = t("web.felt.bargained_away");
  else if (doc.made === true) headline = t("web.result.made", { count: doc.declarer_side_points, contract: doc.contract?.[0] });
  else if (doc.made === false) headline = t("web.result.failed", { count: doc.declarer_side_points, contract: doc.contract?.[0] });
  else headline = t("web.result.over");
  const breakdown = [];
  if (doc.contract) {
    const [points, trump] = doc.contract;
    const named = suitEntry(trump, game)?.symbol ? [" ", suitText(trump, game)] : null;
    breakdown.push(h("li", { "data-breakdown": "contract" }, t("web.result.contract", { name: name(doc.declarer) }), " ",
      h("strong", {}, `${fmtNumber(points)} `, suitMark(trump, game), named)));
    if (doc.declarer_side_points !== null && doc.declarer_side_points !== undefined) {
      breakdown.push(h("li", { "data-breakdown": "points" }, t("web.result.side_took", { count: doc.declarer_side_points, contract: fmtNumber(points) })));
    }
    const friends = [...side].filter((seat) => seat !== doc.declarer);
    breakdown.push(h("li", { "data-breakdown": "friend", "data-friends": friends.length }, friends.length
      ? t("web.result.friend_was", { names: friends.map(name).join(", ") }) : t("web.result.alone")));
  }
  const last = doc.tricks?.length ? doc.tricks[doc.tricks.length - 1] : null;
  const lastTrick = last ? h("div", { class: "last-trick", "data-last-trick": last.cards.length },
    h("span", { class: "label" }, t("web.result.last_trick")),
    last.cards.map((card, i) => {
      const seat = playedBy(last, i, players);
      const c = cardElement(card, game, { small: true });
      if (seat === last.winner) c.classList.add("winner");
      return h("span", { class: "played-by", title: name(seat) }, c);
    }),
    last.winner !== null && last.winner !== undefined ? h("span", { class: "muted" }, t("web.result.won_by", { name: name(last.winner) })) : null) : null;
  return h("div", { class: `result ${doc.made === false ? "failed" : "made"}`, "data-result": doc.made === false ? "failed" : "made" },
    h("h3", {}, headline),
    breakdown.length ? h("ul", { class: "breakdown" }, breakdown) : null,
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, t("web.result.seat")), taken ? h("th", {}, t("web.result.points")) : null, h("th", {}, t("web.result.score")))),
      h("tbody", {}, rows)),
    lastTrick);
}

/** The seat that played a trick's ``i``-th card: the view's ``seats`` (the game's play order,
 * docs/api.md); a view stored before ``seats`` existed goes round from the leader. */
function playedBy(trick, i, players) {
  return trick.seats?.[i] ?? (trick.leader + i) % players;
}

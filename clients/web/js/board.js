// The felt: seats around the table, the current trick laid out in front of who played
// each card, the contract, the kitty, tricks won and the defenders' face-up point cards.
// It draws a view document (domain/mighty/views.py, domain/mitigati/views.py) and knows no API: the live table and the
// replay viewer both use it.

import { cardBack, cardElement, isMitigati, isPointCard, SUIT_SYMBOL, trumpLabel } from "./cards.js";
import { h } from "./dom.js";
import { fmtNumber, t } from "./i18n.js";

/** Where seat `seat` sits, in percent of the felt, with `me` at the bottom. */
export function seatPosition(seat, me, players) {
  const relative = (seat - (me ?? 0) + players) % players;
  const angle = Math.PI / 2 + (relative * 2 * Math.PI) / players;
  const narrow = window.innerWidth < 760; // a phone: the felt is tall, keep the seats inside it
  return { x: 50 + (narrow ? 33 : 41) * Math.cos(angle), y: 50 + (narrow ? 40 : 38) * Math.sin(angle), angle };
}

export function callLabel(call, game) {
  if (call === null || call === undefined) return "";
  if (Array.isArray(call)) return call.map((c) => callLabel(c, game)).join(" + ");
  if (call === "first_trick") return t("web.friend.first_trick");
  if (call === "none") return t("web.friend.none");
  return cardText(call, game);
}

export function cardText(card, game) {
  if (isMitigati(game)) return card;
  const plain = card.split("#")[0];
  if (plain.startsWith("JK")) return t("mighty.joker");
  return `${plain[0] === "T" ? "10" : plain[0]}${SUIT_SYMBOL[plain[1]]}`;
}

function bidText(entry) {
  const [, points, trump] = entry;
  return points === 0 ? t("web.bid.pass") : `${fmtNumber(points)} ${trump === "NT" ? t("web.suit.nt_short") : SUIT_SYMBOL[trump]}`;
}

/** Tricks each seat won, and the point cards among them (Mighty §5: shown face up). */
export function wonBy(doc, players) {
  const tricks = Array(players).fill(0);
  const points = Array.from({ length: players }, () => []);
  for (const trick of doc.tricks || []) {
    if (trick.winner === null || trick.winner === undefined) continue;
    tricks[trick.winner] += 1;
    for (const card of trick.cards) if (isPointCard(card)) points[trick.winner].push(card);
  }
  return { tricks, points };
}

function declarerSide(doc) {
  const side = new Set();
  if (doc.declarer !== null && doc.declarer !== undefined) side.add(doc.declarer);
  if (doc.friend_known && doc.friend !== null && doc.friend !== undefined) side.add(doc.friend);
  for (const f of Array.isArray(doc.friends) ? doc.friends : []) side.add(f);
  return side;
}

/**
 * Draw the felt. `ctx`: {game, players, me (seat or null), names: [..], totals: [..]}.
 */
export function drawFelt(doc, ctx) {
  const { game, players, me } = ctx;
  const mitigati = isMitigati(game);
  const felt = h("div", { class: `felt players-${players}` });
  const won = mitigati ? null : wonBy(doc, players);
  const side = mitigati ? new Set() : declarerSide(doc);
  const lastBid = {};
  for (const entry of doc.auction || []) lastBid[entry[0]] = entry;
  const said = {};
  for (const entry of doc.bargaining?.said || []) said[entry[0]] = entry;

  for (let seat = 0; seat < players; seat += 1) {
    const pos = seatPosition(seat, me, players);
    const badges = [];
    if (doc.dealer === seat) badges.push(h("span", { class: "badge dealer", title: t("web.badge.dealer") }, t("web.badge.dealer_short")));
    if (doc.declarer === seat) badges.push(h("span", { class: "badge declarer", title: t("web.badge.declarer") }, `★ ${t("web.badge.declarer")}`));
    if (!mitigati && side.has(seat) && doc.declarer !== seat) badges.push(h("span", { class: "badge friend" }, t("web.badge.friend")));
    if (!mitigati && !doc.friend_known && doc.friend === seat && me === seat) badges.push(h("span", { class: "badge friend secret" }, t("web.badge.you_friend")));
    const turn = doc.to_act === seat;
    const size = doc.hand_sizes?.[seat] ?? 0;
    const backs = h("div", { class: "backs" }, seat === me ? null : Array.from({ length: Math.min(size, 8) }, () => cardBack({ small: true })));
    const info = [];
    if (!mitigati && won && (doc.phase === "play" || doc.phase === "finished")) {
      info.push(h("span", { class: "tricks", title: t("web.felt.tricks_won") }, t("web.felt.tricks", { count: won.tricks[seat] })));
    }
    if (mitigati && doc.tricks?.length) {
      info.push(h("span", { class: "tricks" }, t("web.felt.tricks", { count: doc.tricks.filter((x) => x.winner === seat).length })));
    }
    let bubble = null;
    if (doc.phase === "bidding" && lastBid[seat]) bubble = h("span", { class: "bubble" }, bidText(lastBid[seat]));
    if (mitigati && said[seat]) bubble = h("span", { class: "bubble" }, `${said[seat][1]}${said[seat][2] != null ? ` ${said[seat][2]}` : ""}`);
    const faceUp = !mitigati && won && !side.has(seat) && won.points[seat].length
      ? h("div", { class: "face-up", title: t("web.felt.face_up"), "data-points": seat }, won.points[seat].map((c) => cardElement(c, game, { small: true })))
      : null;
    const total = ctx.totals?.[seat];
    felt.append(h("div", {
      class: `seat${turn ? " turn" : ""}${seat === me ? " mine" : ""}`,
      style: { left: `${pos.x}%`, top: `${pos.y}%` },
      "data-seat": seat,
    },
    h("div", { class: "nameplate" }, h("span", { class: "name" }, ctx.names?.[seat] ?? t("web.seat.n", { seat })),
      ctx.away?.includes(seat) ? h("span", { class: "away", title: t("web.seat.away_title") }, t("web.seat.away")) : null,
      total !== undefined ? h("span", { class: "total", title: t("web.felt.match_total") }, fmtNumber(total, { signed: true })) : null),
    h("div", { class: "badges" }, badges, info, bubble),
    backs, faceUp));
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

function contractLine(doc, ctx) {
  const { game } = ctx;
  const parts = [];
  if (isMitigati(game)) {
    if (doc.bargaining) {
      const b = doc.bargaining;
      parts.push(h("div", {}, t("web.felt.bargaining", { session: b.session })));
      if (b.offer != null) parts.push(h("div", { class: "muted" }, t("web.felt.offers", { seat: b.payer, amount: b.offer })));
      if (b.ask != null) parts.push(h("div", { class: "muted" }, t("web.felt.asks", { seat: b.seller, amount: b.ask })));
    }
    if (doc.declarations?.length) {
      parts.push(h("div", { class: "declarations" }, doc.declarations.map((d) =>
        h("div", {}, `${ctx.names?.[d.seat] ?? t("web.seat.n", { seat: d.seat })}: ${t(`mitigati.combination.${d.name}`)} (${fmtNumber(d.value)})`,
          d.shown ? h("span", { class: "shown" }, d.shown.map((c) => cardElement(c, game, { small: true }))) : null))));
    }
    if (doc.abandoned) parts.push(h("div", {}, t("web.felt.bargained_away")));
    return h("div", { class: "contract" }, parts);
  }
  if (doc.contract) {
    const [points, trump] = doc.contract;
    parts.push(h("div", { class: "big" }, `${fmtNumber(points)} `, h("span", { class: trump === "H" || trump === "D" ? "red" : "" }, trumpLabel(trump))));
    parts.push(h("div", { class: "muted" }, t("web.felt.by", { name: ctx.names?.[doc.declarer] ?? t("web.seat.n", { seat: doc.declarer }) })));
  } else if (doc.phase === "bidding") {
    parts.push(h("div", { class: "big" }, t("web.felt.bidding")));
  } else if (doc.redeal) {
    parts.push(h("div", { class: "big" }, doc.redeal === "misdeal" ? t("web.felt.misdeal") : t("web.felt.all_passed")));
  }
  if (doc.friend_call) {
    parts.push(h("div", {}, t("web.felt.friend"), " ", callLabel(doc.friend_call[1] ?? doc.friend_call[0], game),
      doc.friend_known && doc.friend !== null && doc.friend !== undefined ? ` → ${ctx.names?.[doc.friend] ?? doc.friend}` : ""));
  }
  if (Array.isArray(doc.friend_calls) && doc.friend_calls.length) parts.push(h("div", {}, t("web.felt.calls"), " ", callLabel(doc.friend_calls, game)));
  if (doc.lead_suit) parts.push(h("div", { class: "muted" }, t("web.felt.advised_lead", { suit: SUIT_SYMBOL[doc.lead_suit] })));
  if (doc.led_suit) parts.push(h("div", { class: "muted" }, t("web.felt.led", { suit: SUIT_SYMBOL[doc.led_suit] ?? doc.led_suit })));
  if (doc.joker_call === true) parts.push(h("div", { class: "callout" }, t("web.felt.joker_called")));
  return h("div", { class: "contract" }, parts);
}

/** The trick in play, each card in front of the seat that played it; else the last one. */
function drawTrick(doc, ctx) {
  const { game, players, me } = ctx;
  let trick = doc.trick;
  let last = false;
  if (!trick && doc.tricks?.length && doc.phase === "play") { trick = doc.tricks[doc.tricks.length - 1]; last = true; }
  const el = h("div", { class: `trick${last ? " last" : ""}`, "data-trick": trick ? trick.cards.length : 0 });
  if (!trick) return el;
  trick.cards.forEach((card, i) => {
    const seat = (trick.leader + i) % players;
    const pos = seatPosition(seat, me, players);
    const x = 50 + 17 * Math.cos(pos.angle);
    const y = 50 + 22 * Math.sin(pos.angle);
    const c = cardElement(card, game);
    c.dataset.playedBy = seat;
    if (last && trick.winner === seat) c.classList.add("winner");
    el.append(h("div", { class: "played", style: { left: `${x}%`, top: `${y}%`, zIndex: i + 1 } }, c));
  });
  return el;
}

/** The hand's result: the contract made or failed, the points and every seat's score. */
export function drawResult(doc, ctx) {
  const { game, players } = ctx;
  if (!doc.scores) return null;
  const rows = [];
  for (let seat = 0; seat < players; seat += 1) {
    const score = doc.scores[seat];
    rows.push(h("tr", { class: score > 0 ? "plus" : score < 0 ? "minus" : "" },
      h("td", {}, ctx.names?.[seat] ?? t("web.seat.n", { seat }), seat === doc.declarer ? " ★" : "", doc.friend === seat && seat !== doc.declarer ? ` (${t("web.badge.friend")})` : ""),
      doc.points ? h("td", {}, fmtNumber(doc.points[seat])) : null,
      h("td", { class: "num" }, fmtNumber(score, { signed: true }))));
  }
  let headline;
  if (isMitigati(game)) headline = doc.abandoned ? t("web.felt.bargained_away") : t("web.result.over");
  else if (doc.made === true) headline = t("web.result.made", { count: doc.declarer_side_points, contract: doc.contract?.[0] });
  else if (doc.made === false) headline = t("web.result.failed", { count: doc.declarer_side_points, contract: doc.contract?.[0] });
  else headline = t("web.result.over");
  return h("div", { class: `result ${doc.made === false ? "failed" : "made"}`, "data-result": doc.made === false ? "failed" : "made" },
    h("h3", {}, headline),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, t("web.result.seat")), doc.points ? h("th", {}, t("web.result.points")) : null, h("th", {}, t("web.result.score")))),
      h("tbody", {}, rows)));
}

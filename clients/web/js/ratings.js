// The ratings (docs/ratings.md): a player's rating per rule set with its history as a
// plain SVG chart, their reputation, and a rule set's leaderboard (#/leaderboards/GAME).

import { get } from "./api.js";
import { h } from "./dom.js";
import { games } from "./games.js";
import { fmtNumber, t } from "./i18n.js";

const NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const fixed = (n) => fmtNumber(Math.round(n * 10) / 10);

/** The ordinal after each of the last rated hands: `history` is [[at_ms, ordinal], ...]. */
export function historyChart(history) {
  const W = 360; const H = 140; const pad = { l: 40, r: 10, t: 10, b: 12 };
  const values = history.map(([, ordinal]) => ordinal);
  const top = Math.max(1, ...values);
  const bottom = Math.min(0, ...values);
  const x = (i) => pad.l + (i * (W - pad.l - pad.r)) / Math.max(1, history.length - 1);
  const y = (v) => pad.t + ((top - v) * (H - pad.t - pad.b)) / Math.max(1e-9, top - bottom);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "rating-chart", role: "img",
    "aria-label": t("web.player.history"), "data-points": history.length });
  chart.append(svg("line", { x1: pad.l, x2: W - pad.r, y1: y(0), y2: y(0), class: "axis" }));
  chart.append(svg("text", { x: pad.l - 4, y: y(top) + 4, class: "tick", "text-anchor": "end" }, fixed(top)));
  chart.append(svg("text", { x: pad.l - 4, y: y(bottom) + 4, class: "tick", "text-anchor": "end" }, fixed(bottom)));
  if (history.length) {
    const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    chart.append(svg("polyline", { points, fill: "none", stroke: "#d9a400", "stroke-width": 2.5, "stroke-linejoin": "round" }));
    values.forEach((v, i) => chart.append(svg("circle", { cx: x(i), cy: y(v), r: 3, fill: "#d9a400" })));
  }
  return chart;
}

/** The ratings and reputation part of a player's page (GET /players/{p}). */
export function ratingsPart(player) {
  const rated = Object.entries(player.ratings || {});
  const reputation = player.reputation || { finished: 0, abandoned: 0 };
  return h("section", { class: "ratings" },
    h("h3", {}, t("web.player.ratings")),
    rated.length ? rated.map(([game, r]) => h("div", { class: "rating", "data-game": game },
      h("h4", {}, game, r.provisional ? h("span", { class: "badge" }, t("web.player.provisional")) : null),
      h("dl", { class: "stats" },
        h("dt", {}, t("web.player.ordinal")), h("dd", { "data-stat": "ordinal" }, fixed(r.ordinal)),
        h("dt", {}, t("web.player.mu")), h("dd", {}, fixed(r.mu)),
        h("dt", {}, t("web.player.sigma")), h("dd", {}, fixed(r.sigma)),
        h("dt", {}, t("web.player.rated_hands")), h("dd", {}, fmtNumber(r.hands))),
      historyChart(r.history || []))) : h("p", { class: "muted" }, t("web.player.no_ratings")),
    h("h3", {}, t("web.player.reputation")),
    h("dl", { class: "stats" },
      h("dt", {}, t("web.player.finished")), h("dd", { "data-stat": "finished" }, fmtNumber(reputation.finished)),
      h("dt", {}, t("web.player.abandoned")), h("dd", { "data-stat": "abandoned" }, fmtNumber(reputation.abandoned))));
}

/** #/leaderboards/GAME: the rule set's best rated players, a game picker above. */
export function showLeaderboard(root, named) {
  const picker = h("select", { name: "board-game", "aria-label": t("web.board.game"),
    onchange: (e) => { location.hash = `#/leaderboards/${encodeURIComponent(e.target.value)}`; } });
  const body = h("div", {}, h("p", { class: "muted" }, t("web.loading")));
  root.append(h("div", { class: "panel leaderboard" }, h("h2", {}, t("web.board.title")), picker, body));
  // no game named: the catalogue's first
  const listed = games();
  listed.then((all) => picker.append(...all.games.map((g) =>
    h("option", { value: g.game, selected: g.game === (named ?? all.games[0]?.game) }, g.name)))).catch(() => {});
  Promise.resolve(named ?? listed.then((all) => all.games[0]?.game ?? "")).then((game) =>
    get(`/leaderboards/${encodeURIComponent(game)}?limit=50`, { auth: false })).then((board) => {
    body.replaceChildren(board.players.length
      ? h("table", { class: "board" },
        h("thead", {}, h("tr", {}, h("th", {}, t("web.board.rank")), h("th", {}, t("web.board.player")),
          h("th", {}, t("web.board.rating")), h("th", {}, t("web.board.hands")))),
        h("tbody", {}, board.players.map((row) => h("tr", { "data-player": row.player },
          h("td", {}, fmtNumber(row.rank)),
          h("td", {}, row.player.startsWith("bot:")
            ? t("web.player.bot", { name: row.name ?? row.player })
            : h("a", { href: `#/p/${encodeURIComponent(row.player)}` }, row.name ?? row.player)),
          h("td", {}, fixed(row.ordinal)), h("td", {}, fmtNumber(row.hands))))))
      : h("p", { class: "muted" }, t("web.board.empty")));
  }).catch((error) => body.replaceChildren(h("p", {}, error.message)));
}

// The match ledger as a chart over the hands: each seat's running total, inline SVG.

import { h } from "./dom.js";
import { fmtNumber, t } from "./i18n.js";

const NS = "http://www.w3.org/2000/svg";
const COLOURS = ["#f4c542", "#e8554e", "#4ea1e8", "#7bd389", "#c58af9", "#f29e4c", "#5fd3d3", "#ffffff"];

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/** `ledger` is GET /tables/{t}/ledger: {hands: [{hand, scores}], totals}. */
export function ledgerChart(ledger, names) {
  const players = ledger.totals.length || (ledger.hands[0]?.scores.length ?? 0);
  const running = [Array(players).fill(0)];
  for (const line of ledger.hands) running.push(running[running.length - 1].map((t, i) => t + line.scores[i]));
  const all = running.flat();
  const top = Math.max(1, ...all);
  const bottom = Math.min(-1, ...all);
  const W = 360; const H = 180; const pad = { l: 34, r: 10, t: 10, b: 22 };
  const x = (i) => pad.l + (i * (W - pad.l - pad.r)) / Math.max(1, running.length - 1);
  const y = (v) => pad.t + ((top - v) * (H - pad.t - pad.b)) / (top - bottom);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "ledger-chart", role: "img", "aria-label": t("web.ledger.chart"), "data-ledger": ledger.hands.length });
  chart.append(svg("line", { x1: pad.l, x2: W - pad.r, y1: y(0), y2: y(0), class: "axis" }));
  chart.append(svg("text", { x: pad.l - 4, y: y(top) + 4, class: "tick", "text-anchor": "end" }, top));
  chart.append(svg("text", { x: pad.l - 4, y: y(0) + 4, class: "tick", "text-anchor": "end" }, 0));
  chart.append(svg("text", { x: pad.l - 4, y: y(bottom) + 4, class: "tick", "text-anchor": "end" }, bottom));
  running.forEach((_, i) => {
    if (i > 0) chart.append(svg("text", { x: x(i), y: H - 6, class: "tick", "text-anchor": "middle" }, i));
  });
  for (let seat = 0; seat < players; seat += 1) {
    const points = running.map((totals, i) => `${x(i).toFixed(1)},${y(totals[seat]).toFixed(1)}`).join(" ");
    chart.append(svg("polyline", { points, fill: "none", stroke: COLOURS[seat % COLOURS.length], "stroke-width": 2.5, "stroke-linejoin": "round" }));
    running.forEach((totals, i) => {
      if (i > 0) chart.append(svg("circle", { cx: x(i), cy: y(totals[seat]), r: 3, fill: COLOURS[seat % COLOURS.length] },
        svg("title", {}, t("web.ledger.point", { name: names?.[seat] ?? t("web.seat.n", { seat }), hand: i, total: totals[seat] }))));
    });
  }
  const legend = h("ul", { class: "legend" }, Array.from({ length: players }, (_, seat) =>
    h("li", {}, h("span", { class: "swatch", style: { background: COLOURS[seat % COLOURS.length] } }),
      `${names?.[seat] ?? t("web.seat.n", { seat })} `, h("strong", {}, fmtNumber(ledger.totals[seat] ?? 0, { signed: true })))));
  return h("figure", { class: "ledger" }, h("figcaption", {}, t("web.ledger.caption", { count: ledger.hands.length })), chart, legend);
}

// The pictures on the cards and the suit marks, bundled as SVG paths: no emoji font is
// needed (a machine without one drew Mitigati's suits as empty boxes). The catalogue
// (GET /api/v1/games) names each card's and suit's picture (`symbol`); the client knows
// the pictures, not the games.

const SVG = "http://www.w3.org/2000/svg";

const PATHS = {
  spade: "M12 1C9 6 2 9.5 2 14c0 3 2.3 5 5 5 1.8 0 3.2-.8 4-2-.2 2.5-1 4.3-3 6h8c-2-1.7-2.8-3.5-3-6 .8 1.2 2.2 2 4 2 2.7 0 5-2 5-5 0-4.5-7-8-10-13z",
  heart: "M12 21C5 15 1 11.5 1 7.5 1 4.4 3.4 2 6.4 2c2.2 0 4.2 1.3 5.6 3.2C13.4 3.3 15.4 2 17.6 2 20.6 2 23 4.4 23 7.5c0 4-4 7.5-11 13.5z",
  diamond: "M12 1l9 11-9 11-9-11z",
  club: "M7.5 6.5a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0-9 0zM2 13.5a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0-9 0zM13 13.5a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0-9 0zM11 12h2l1.5 11h-5z",
  joker: "M12 1.5l2.9 7.1 7.6.6-5.8 4.9 1.8 7.5L12 17.6l-6.5 4 1.8-7.5-5.8-4.9 7.6-.6z",
  coin: "M2 12a10 10 0 1 0 20 0a10 10 0 1 0-20 0zM7 12a5 5 0 1 0 10 0a5 5 0 1 0-10 0z",
  cup: "M5 2h14c0 6-3 9-6 9.5V18l4 3v2H7v-2l4-3v-6.5C8 11 5 8 5 2z",
  baton: "M4 20L17 3q2-2 4 0t0 4L6 22q-2 1-3 0t1-2z",
  sword: "M11 1h2l.5 14H18v2h-4.8v4l1.3 2h-5l1.3-2v-4H6v-2h4.5z",
  trump: "M12 1l2.5 8.5L23 12l-8.5 2.5L12 23l-2.5-8.5L1 12l8.5-2.5z",
  fool: "M2 12a10 10 0 1 0 20 0a10 10 0 1 0-20 0zM8 8.5a1.5 1.5 0 1 0 3 0a1.5 1.5 0 1 0-3 0zM13 8.5a1.5 1.5 0 1 0 3 0a1.5 1.5 0 1 0-3 0zM7 14q5 5 10 0l-1-.5q-4 3.5-8 0z",
};

/** The picture `name` as an inline SVG element (empty for an unknown name). */
export function symbol(name, { label = null } = {}) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `symbol symbol-${name}`);
  svg.setAttribute("data-symbol", name);
  if (label) { svg.setAttribute("role", "img"); svg.setAttribute("aria-label", label); } else svg.setAttribute("aria-hidden", "true");
  const d = PATHS[name];
  if (d) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    path.setAttribute("fill", "currentColor");
    path.setAttribute("fill-rule", "evenodd");
    svg.append(path);
  }
  return svg;
}

export const SYMBOL_NAMES = Object.keys(PATHS);

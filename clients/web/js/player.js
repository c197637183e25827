// A player's page: name, hands played, total score, contracts made and failed; their
// ratings with a chart of each, and their reputation (ratings.js).

import { get } from "./api.js";
import { h } from "./dom.js";
import { fmtNumber, t } from "./i18n.js";
import { ratingsPart } from "./ratings.js";

export function showPlayer(root, playerId) {
  const page = h("div", { class: "panel player-page" }, h("p", { class: "muted" }, t("web.loading")));
  root.append(page);
  get(`/players/${encodeURIComponent(playerId)}`, { auth: false }).then((p) => {
    page.replaceChildren(
      h("h2", {}, p.bot ? t("web.player.bot", { name: p.name }) : p.name),
      h("dl", { class: "stats" },
        h("dt", {}, t("web.player.hands")), h("dd", { "data-stat": "hands" }, fmtNumber(p.hands)),
        h("dt", {}, t("web.player.total")), h("dd", { "data-stat": "total" }, fmtNumber(p.total, { signed: true })),
        h("dt", {}, t("web.player.made")), h("dd", { "data-stat": "made" }, fmtNumber(p.contracts.made)),
        h("dt", {}, t("web.player.failed")), h("dd", { "data-stat": "failed" }, fmtNumber(p.contracts.failed))),
      ratingsPart(p),
      h("a", { href: "#/" }, `← ${t("web.nav.lobby")}`));
  }).catch((error) => page.replaceChildren(h("p", {}, error.message)));
}

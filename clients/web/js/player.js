// A player's page: name, hands played, total score, contracts made and failed.

import { get } from "./api.js";
import { h } from "./dom.js";

export function showPlayer(root, playerId) {
  const page = h("div", { class: "panel player-page" }, h("p", { class: "muted" }, "Loading…"));
  root.append(page);
  get(`/players/${encodeURIComponent(playerId)}`, { auth: false }).then((p) => {
    page.replaceChildren(
      h("h2", {}, p.bot ? `${p.name} (bot)` : p.name),
      h("dl", { class: "stats" },
        h("dt", {}, "Hands played"), h("dd", { "data-stat": "hands" }, p.hands),
        h("dt", {}, "Total score"), h("dd", { "data-stat": "total" }, p.total > 0 ? `+${p.total}` : p.total),
        h("dt", {}, "Contracts made"), h("dd", { "data-stat": "made" }, p.contracts.made),
        h("dt", {}, "Contracts failed"), h("dd", { "data-stat": "failed" }, p.contracts.failed)),
      h("a", { href: "#/" }, "← lobby"));
  }).catch((error) => page.replaceChildren(h("p", {}, error.message)));
}

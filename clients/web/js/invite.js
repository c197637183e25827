// The join page of a private table's invite link (#/join/TABLE/CODE, chat.js makes it):
// log in as a guest if need be, then take a seat with the code (docs/api.md, "Private tables").

import { get, login, post, session } from "./api.js";
import { h, toast } from "./dom.js";
import { t } from "./i18n.js";

export function showInvite(root, tableId, code) {
  const panel = h("section", { class: "panel invite-page" });
  root.append(panel);
  const name = h("input", { name: "name", maxlength: 24, placeholder: t("web.invite.name"), autocomplete: "nickname" });
  const button = h("button", { class: "primary", type: "submit", "data-action": "join_invite" }, t("web.invite.join"));
  const form = h("form", { onsubmit: async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      if (!session.token) await login(name.value.trim());
      await post(`/tables/${tableId}/join`, { invite: code });
      location.hash = `#/t/${tableId}`;
    } catch (error) { toast(error.message); button.disabled = false; }
  } }, session.token ? null : h("label", {}, t("web.invite.display_name"), " ", name), button);
  panel.append(h("h2", {}, t("web.invite.title")), h("p", { class: "table-name muted" }, tableId), form);
  get(`/tables/${tableId}`, { auth: false }).then((table) => {
    panel.querySelector(".table-name").textContent = `${table.name} · ${table.game}`;
  }).catch((error) => toast(error.message));
  if (!session.token) setTimeout(() => name.focus(), 0);
}

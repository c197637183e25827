// The table's chat (docs/api.md, "Table chat") beside the felt: the messages as the
// stream pushes them (text, never markup: h() makes text nodes), an input, the quick
// phrases one click away (sent as keys: each reader sees them in its language), a mute
// button per author (docs/api.md, "Mutes"), and, for a private table's creator, the
// invite link to copy (docs/api.md, "Private tables").

import { api, get, post, session } from "./api.js";
import { clear, h, toast } from "./dom.js";
import { t } from "./i18n.js";

const PHRASES = ["hello", "good_luck", "well_played", "thanks", "bye"]; // their words: web.chat.phrase.<key>
const SHOWN = 200; // messages the panel keeps

/** The link that opens the join page of a private table with its code. */
export function inviteLink(table, code) {
  return `${location.origin}${location.pathname}#/join/${encodeURIComponent(table)}/${encodeURIComponent(code)}`;
}

export function chatPanel(tableId) {
  const messages = []; // as received, oldest first
  const muted = new Set();
  const list = h("ol", { class: "chat-list", "aria-live": "polite", "data-chat": "" });
  const input = h("input", { name: "chat", maxlength: 280, placeholder: session.token ? t("web.chat.say") : t("web.chat.login"),
    autocomplete: "off", disabled: !session.token, "aria-label": t("web.chat.message") });
  const invite = h("div", { class: "invite" });
  const mutedBox = h("div", { class: "muted-list" });
  let lastId = null;

  function draw() {
    clear(list);
    for (const m of messages) {
      if (muted.has(m.player)) continue;
      const mine = m.player === session.player;
      list.append(h("li", { class: `chat-message${mine ? " mine" : ""}${m.phrase ? " phrase" : ""}`, "data-chat-id": m.id },
        h("span", { class: "who" }, m.name), " ", h("span", { class: "said" }, m.phrase ? t(`web.chat.phrase.${m.phrase}`) : m.text),
        !mine && session.token ? h("button", { class: "link mute", title: t("web.chat.mute_title", { name: m.name }), "data-action": "mute",
          "data-player": m.player, onclick: () => mute(m.player, m.name) }, t("web.chat.mute")) : null));
    }
    list.scrollTop = list.scrollHeight;
    clear(mutedBox);
    if (muted.size) {
      mutedBox.append(t("web.chat.muted"), " ", [...muted].map((player) => {
        const name = messages.find((m) => m.player === player)?.name ?? player;
        return h("button", { class: "link", "data-action": "unmute", title: t("web.chat.unmute_title", { name }),
          onclick: () => unmute(player) }, `${name} ✕`);
      }));
    }
  }

  function receive(frame) {
    if (messages.some((m) => m.id === frame.id)) return;
    messages.push(frame);
    if (messages.length > SHOWN) messages.splice(0, messages.length - SHOWN);
    lastId = frame.id;
    draw();
  }

  async function say(body) {
    try {
      await post(`/tables/${tableId}/chat`, body);
      return true;
    } catch (error) { toast(error.message); return false; }
  }

  async function mute(player, name) {
    try {
      await post("/mutes", { player });
      muted.add(player);
      toast(t("web.chat.muted_toast", { name }), "info");
      draw();
    } catch (error) { toast(error.message); }
  }

  async function unmute(player) {
    try {
      await api("DELETE", `/mutes/${encodeURIComponent(player)}`);
      muted.delete(player);
      draw();
    } catch (error) { toast(error.message); }
  }

  async function loadMine() {
    if (!session.token) return;
    try { input.maxLength = (await get(`/tables/${tableId}/chat`)).text_max ?? input.maxLength; } catch { /* 280 */ }
    try { for (const p of (await get("/mutes")).players) muted.add(p); draw(); } catch { /* none */ }
    try {
      const table = await get(`/tables/${tableId}`); // the creator's Table holds a private table's code
      if (table.invite) {
        const link = inviteLink(tableId, table.invite);
        const field = h("input", { readonly: true, value: link, class: "invite-link", "aria-label": t("web.chat.invite_link") });
        clear(invite).append(h("span", {}, t("web.chat.invite"), " "), field,
          h("button", { type: "button", "data-action": "copy_invite", onclick: async () => {
            field.select();
            try { await navigator.clipboard.writeText(link); toast(t("web.chat.copied"), "info"); } catch { toast(t("web.chat.copy_by_hand"), "info"); }
          } }, t("web.chat.copy")));
      }
    } catch { /* no table yet */ }
  }

  const form = h("form", { class: "chat-say", onsubmit: async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    if (await say({ text })) input.value = "";
  } }, input, h("button", { type: "submit", "data-action": "chat", disabled: !session.token }, t("web.chat.send")));
  const phrases = h("div", { class: "phrases" }, PHRASES.map((key) => h("button", {
    type: "button", "data-phrase": key, disabled: !session.token, onclick: () => say({ phrase: key }) }, t(`web.chat.phrase.${key}`))));
  const element = h("aside", { class: "panel chat", "aria-label": t("web.chat.panel") },
    invite, h("h3", {}, t("web.chat.title")), list, phrases, form, mutedBox);
  loadMine();
  return { element, receive, get lastId() { return lastId; } };
}

// Accounts (docs/accounts.md): sign up, log in, log out, delete; a guest keeps its history
// by becoming an account. Names are shown as text; a password goes to the server and
// nowhere else (never stored: the session keeps the server's tokens only).

import { api, keepMyLang, post, session } from "./api.js";
import { h, toast } from "./dom.js";
import { lang, t } from "./i18n.js";

const NAME = { minlength: 3, maxlength: 24, required: true, autocomplete: "username" };

function passwordInput(autocomplete) {
  return h("input", { type: "password", name: "password", minlength: 8, maxlength: 256, required: true,
    autocomplete, placeholder: t("web.account.password_hint") });
}

/** A form of a name and a password; `send(name, password)` answers the session to keep. */
function credentialsForm({ title, action, button, autocomplete, name = "", send, onDone, note = null }) {
  const nameInput = h("input", { ...NAME, name: "account", value: name, placeholder: t("web.account.name_hint") });
  const password = passwordInput(autocomplete);
  return h("form", {
    class: "panel login", "data-form": action,
    onsubmit: async (event) => {
      event.preventDefault();
      try {
        session.save(await send(nameInput.value.trim(), password.value));
        keepMyLang(lang()); // the account speaks the language picked here
        password.value = "";
        onDone();
      } catch (error) { toast(error.message); }
    },
  }, h("h2", {}, title), note,
  h("label", {}, t("web.account.name"), " ", nameInput), h("label", {}, t("web.account.password"), " ", password),
  h("button", { type: "submit", "data-action": action, class: "primary" }, button));
}

export const logIn = (name, password) => post("/sessions", { name, password }, { auth: false });
/** A new account; with a guest's token (`keep`), the guest becomes it and keeps its history. */
export const signUp = (name, password, keep = false) => post("/accounts", { name, password }, { auth: keep });

/** End the session on the server (its token stops working everywhere), then here. */
export async function logOut() {
  if (session.account) {
    try { await api("DELETE", "/sessions"); } catch { /* ended already, or offline: forgotten here anyway */ }
  }
  session.clear();
}

/** The lobby's forms for a person not playing yet: log in, or sign up. */
export function accountForms(onDone) {
  return [
    credentialsForm({ title: t("web.account.log_in"), action: "log-in", button: t("web.account.log_in"), autocomplete: "current-password",
      send: logIn, onDone }),
    credentialsForm({ title: t("web.account.sign_up"), action: "sign-up", button: t("web.account.create"),
      autocomplete: "new-password", send: (n, p) => signUp(n, p), onDone,
      note: h("p", { class: "muted" }, t("web.account.about")) }),
  ];
}

/** The top bar's part for the person: their name, their account page, log out. */
export function meBar(onChange) {
  if (!session.player) return [];
  return [
    h("a", { href: `#/p/${encodeURIComponent(session.player)}` }, session.name), " ",
    h("a", { href: "#/account", "data-action": "account" }, session.account ? t("web.account.account") : t("web.account.keep_short")), " ",
    h("button", { class: "link", "data-action": "log-out",
      onclick: async () => { await logOut(); onChange(); } }, t("web.nav.logout")),
  ];
}

/** #/account: a guest makes itself an account; an account logs out or deletes itself. */
export function showAccount(root, onChange) {
  const done = () => { onChange(); location.hash = "#/"; };
  if (!session.player) {
    root.append(h("div", { class: "account-page accounts" }, accountForms(done)));
    return;
  }
  if (!session.account) {
    root.append(h("div", { class: "account-page" }, credentialsForm({
      title: t("web.account.keep"), action: "keep", button: t("web.account.make"),
      autocomplete: "new-password", name: session.name, send: (n, p) => signUp(n, p, true), onDone: done,
      note: h("p", { class: "muted" }, t("web.account.keep_about")),
    })));
    return;
  }
  const confirm = h("button", { class: "danger", "data-action": "delete-for-good", hidden: true,
    onclick: async () => {
      try {
        await api("DELETE", "/accounts/me");
        session.clear();
        done();
      } catch (error) { toast(error.message); }
    } }, t("web.account.delete_for_good"));
  root.append(h("section", { class: "panel login account-page" },
    h("h2", {}, t("web.account.yours")),
    h("p", {}, t("web.account.logged_in_as"), " ", h("strong", { "data-account-name": "" }, session.name)),
    h("button", { "data-action": "log-out-here", onclick: async () => { await logOut(); done(); } }, t("web.account.log_out")),
    h("p", { class: "muted" }, t("web.account.delete_about")),
    h("button", { "data-action": "delete-account", onclick: (event) => { event.target.hidden = true; confirm.hidden = false; } },
      t("web.account.delete")),
    confirm));
}

// The client's own words in the reader's language (docs/i18n.md): the catalog the gateway
// serves (GET /api/v1/i18n/{lang}, built from the same PO files as the server's labels),
// plural forms by CLDR category through Intl.PluralRules, numbers and dates through Intl.
// The choice is kept in localStorage and, for a logged-in player, as its lang setting.

export const LANGS = ["ko", "en", "fi", "ru", "ja", "it"];
const STORE = "mighty.lang";

let current = "en";
let messages = {};
let plurals = new Intl.PluralRules("en");
let numbers = new Intl.NumberFormat("en");

/** The language the page is in now. */
export function lang() { return current; }

/** The language kept from the last choice, else the browser's first one we speak, else English. */
export function chosenLang() {
  const kept = localStorage.getItem(STORE);
  if (LANGS.includes(kept)) return kept;
  for (const wanted of navigator.languages || [navigator.language]) {
    const base = String(wanted || "").toLowerCase().split("-")[0];
    if (LANGS.includes(base)) return base;
  }
  return "en";
}

export function keptLang() { return LANGS.includes(localStorage.getItem(STORE)) ? localStorage.getItem(STORE) : null; }

export function keepLang(code) { if (LANGS.includes(code)) localStorage.setItem(STORE, code); }

/** Load `code`'s catalog; the page's words follow it from the next draw on. */
export async function loadLang(code) {
  const wanted = LANGS.includes(code) ? code : "en";
  const answer = await fetch(`/api/v1/i18n/${wanted}`, { headers: { Accept: "application/json" } });
  if (!answer.ok) return false;
  const data = await answer.json();
  messages = data.messages || {};
  current = wanted;
  plurals = new Intl.PluralRules(wanted);
  numbers = new Intl.NumberFormat(wanted);
  document.documentElement.lang = wanted;
  return true;
}

/** Every language the service speaks, each named in itself (GET /api/v1/i18n). */
export async function languages() {
  const answer = await fetch("/api/v1/i18n", { headers: { Accept: "application/json" } });
  return answer.ok ? (await answer.json()).languages : LANGS.map((code) => ({ lang: code, name: code }));
}

function shown(value) {
  return typeof value === "number" ? numbers.format(value) : String(value);
}

/**
 * The text of `key` with its {fields} filled from `args`; a message with plural forms
 * (key#one, key#few, ...) takes the form of `args.count`'s category. A key the catalog
 * lacks shows as itself (a test holds every key to be there).
 */
export function t(key, args = {}) {
  let text;
  if (typeof args.count === "number") text = messages[`${key}#${plurals.select(args.count)}`] ?? messages[`${key}#other`];
  if (text === undefined) text = messages[key];
  if (text === undefined) return key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in args ? shown(args[name]) : whole));
}

/** A number as the language writes it; `signed`: a score, "+12" or "-3". */
export function fmtNumber(n, { signed = false } = {}) {
  if (typeof n !== "number") return String(n ?? "");
  return signed && n > 0 ? `+${numbers.format(n)}` : numbers.format(n);
}

/** A date and time as the language writes them. */
export function fmtDate(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(date);
}

// The players' rules guides in the reader's language (docs/rules/guides/<lang>/*.md, served
// by the gateway at /rules/; the English guide when a language lacks one; the "source" link
// is the rules specification, docs/rules/*.md), shown through a small Markdown renderer: headings, paragraphs, lists, tables, code, emphasis
// and links. Everything is escaped first; only the renderer's own tags are made.

import { h } from "./dom.js";
import { games } from "./games.js";
import { lang, t } from "./i18n.js";

// the guides the games' catalogue names (each game's `guide`: its file and title), in its
// order; games of a family share one
let guides = new Map();

async function knownGuides() {
  const found = new Map();
  for (const game of (await games()).games) if (game.guide) found.set(game.guide.name, game.guide.title);
  guides = found;
  return found;
}

function escape(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function slug(text) {
  return text.toLowerCase().replace(/[^\w\s-]/g, "").trim().replace(/\s+/g, "-");
}

function inline(text) {
  let out = escape(text);
  out = out.replace(/`([^`]+)`/g, "<code>$1</code>");
  out = out.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  out = out.replace(/(^|[^*])\*([^*]+)\*/g, "$1<em>$2</em>");
  out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label, href) => {
    let target = href;
    const guide = href.match(/^(?:\.\/)?(\w[\w-]*)\.md(#.*)?$/);
    if (href.startsWith("#")) target = `#/rules/${current}${href}`;
    else if (guide && guides.has(guide[1])) target = `#/rules/${guide[1]}${guide[2] ?? ""}`;
    else if (!/^https?:/.test(href)) return label; // a repository link the site does not serve
    return `<a href="${target}">${label}</a>`;
  });
  return out;
}

let current = "";

export function renderMarkdown(source) {
  const lines = source.split("\n");
  const html = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const code = [];
      i += 1;
      while (i < lines.length && !/^```/.test(lines[i])) { code.push(lines[i]); i += 1; }
      html.push(`<pre><code>${escape(code.join("\n"))}</code></pre>`);
      i += 1;
    } else if (/^#{1,6} /.test(line)) {
      const level = line.match(/^#+/)[0].length;
      const text = line.slice(level + 1);
      html.push(`<h${level} id="${slug(text)}">${inline(text)}</h${level}>`);
      i += 1;
    } else if (/^\|/.test(line)) {
      const rows = [];
      while (i < lines.length && /^\|/.test(lines[i])) { rows.push(lines[i]); i += 1; }
      const cells = (row) => row.replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
      const body = rows.filter((r, n) => !(n === 1 && /^[|\s:-]+$/.test(r)));
      html.push(`<table><thead><tr>${cells(body[0]).map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead><tbody>${body.slice(1)
        .map((r) => `<tr>${cells(r).map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`);
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      while (i < lines.length && (/^\s*([-*]|\d+\.) /.test(lines[i]) || (/^\s{2,}\S/.test(lines[i]) && items.length))) {
        if (/^\s*([-*]|\d+\.) /.test(lines[i]) && !/^\s{3,}/.test(lines[i])) items.push(lines[i].replace(/^\s*([-*]|\d+\.) /, ""));
        else items[items.length - 1] += ` ${lines[i].trim().replace(/^([-*]|\d+\.) /, "· ")}`;
        i += 1;
      }
      const tag = ordered ? "ol" : "ul";
      html.push(`<${tag}>${items.map((it) => `<li>${inline(it)}</li>`).join("")}</${tag}>`);
    } else if (/^>/.test(line)) {
      const quote = [];
      while (i < lines.length && /^>/.test(lines[i])) { quote.push(lines[i].replace(/^>\s?/, "")); i += 1; }
      html.push(`<blockquote>${inline(quote.join(" "))}</blockquote>`);
    } else if (!line.trim()) {
      i += 1;
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !/^(#|\||```|>|\s*([-*]|\d+\.) )/.test(lines[i])) { para.push(lines[i]); i += 1; }
      html.push(`<p>${inline(para.join(" "))}</p>`);
    }
  }
  return html.join("\n");
}

export function showRules(root, name = "") {
  const [guide, anchor] = name.split("#");
  const nav = h("nav", { class: "rules-nav" });
  const article = h("article", { class: "rules panel" }, h("p", { class: "muted" }, t("web.loading")));
  root.append(h("div", { class: "rules-page" }, nav, article));
  knownGuides()
    .then((found) => {
      current = found.has(guide) ? guide : [...found.keys()][0];
      nav.append(...[...found].map(([key, title]) =>
        h("a", { href: `#/rules/${key}`, class: key === current ? "current" : "" }, title)),
      h("a", { href: `/rules/${current}.md` }, t("web.rules.source")));
      const fetchGuide = (code) => fetch(`/rules/guides/${code}/${current}.md`)
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(t("web.error.status", { status: r.status })))));
      return fetchGuide(lang()).catch(() => fetchGuide("en"));
    })
    .then((text) => {
      article.innerHTML = renderMarkdown(text);
      const target = location.hash.split("#")[2];
      if (target || anchor) document.getElementById(target || anchor)?.scrollIntoView();
    })
    .catch((error) => { article.textContent = error.message; });
}

// The deal's commitment, checked in the browser (docs/architecture.md, "Deals are data"):
// before the bidding the table publishes sha256(" ".join(order) + "|" + salt) as hex; when
// the hand ends it reveals the order and the salt. Seat i was dealt order[i*h:(i+1)*h]
// and the kitty is the tail.

import { t } from "./i18n.js";

export async function commitmentOf(order, salt) {
  const bytes = new TextEncoder().encode(`${order.join(" ")}|${salt}`);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether the revealed deal hashes to the commitment and is the deal the hand was played with. */
export async function checkDeal({ order, salt, commitment, dealt, kitty }) {
  const computed = await commitmentOf(order, salt);
  const problems = [];
  if (computed !== commitment) problems.push(t("web.proof.bad_hash", { computed: `${computed.slice(0, 16)}…`, commitment: `${commitment.slice(0, 16)}…` }));
  if (dealt) {
    const size = dealt[0]?.length ?? 0;
    dealt.forEach((cards, seat) => {
      const slice = order.slice(seat * size, (seat + 1) * size);
      if ([...slice].sort().join(" ") !== [...cards].sort().join(" ")) problems.push(t("web.proof.not_dealt", { seat: String(seat), slice: `order[${seat * size}:${(seat + 1) * size}]` }));
    });
    if (kitty) {
      const tail = order.slice(dealt.length * size);
      if ([...tail].sort().join(" ") !== [...kitty].sort().join(" ")) problems.push(t("web.proof.kitty"));
    }
  }
  return { ok: problems.length === 0, computed, problems };
}

const SEEN = "mighty.commitments";
/** Remember a commitment seen live before the bidding, to compare with the one revealed later. */
export function rememberCommitment(table, hand, commitment) {
  if (!commitment) return;
  const all = JSON.parse(localStorage.getItem(SEEN) || "{}");
  all[`${table}/${hand}`] = commitment;
  localStorage.setItem(SEEN, JSON.stringify(all));
}

export function seenCommitment(table, hand) {
  return JSON.parse(localStorage.getItem(SEEN) || "{}")[`${table}/${hand}`] ?? null;
}

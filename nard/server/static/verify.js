// Recomputing a match's dice in the browser (docs/fair-dice.md), with WebCrypto.
// verifyRecord makes the checks `nard verify` makes (nard/match/verify.py), and
// both are tested against the same records (tests/data/fair_dice_vectors/).
"use strict";

const encoder = new TextEncoder();
const HEX_64 = /^[0-9a-fA-F]{64}$/;
export const CONTRIBUTION_MAX = 64;
// Unicode's control characters (category Cc) and the line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /\p{Cs}/u; // text that has no UTF-8 form
const SHOWN_PROBLEMS = 3;

function hexToBytes(hex) {
  if (!HEX_64.test(hex)) throw new Error(`not 64 hex digits: ${hex}`);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function bytesToHex(bytes) {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function commitmentOf(seedHex) {
  return bytesToHex(await crypto.subtle.digest("SHA-256", hexToBytes(seedHex)));
}

// Die number n: HMAC-SHA256(seed, "client:n" then "client:n:k"), the first byte below 252.
export async function fairDie(key, clientSeed, n) {
  for (let k = 0; ; k++) {
    const message = k === 0 ? `${clientSeed}:${n}` : `${clientSeed}:${n}:${k}`;
    const digest = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
    for (const b of digest) if (b < 252) return (b % 6) + 1;
  }
}

// What is wrong with one player's contribution, or null: 1-64 characters counted as
// Python counts them (code points, not UTF-16 units), no control character.
export function contributionProblem(seed) {
  const chars = [...seed];
  if (chars.length === 0) return { key: "verify_contribution_empty", values: {} };
  if (chars.length > CONTRIBUTION_MAX) return { key: "verify_contribution_long", values: { length: chars.length } };
  const control = chars.findIndex((c) => CONTROL.test(c));
  if (control >= 0) {
    const code = `U+${chars[control].codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    return { key: "verify_contribution_control", values: { position: control + 1, code } };
  }
  const surrogate = chars.findIndex((c) => LONE_SURROGATE.test(c));
  if (surrogate >= 0) return { key: "verify_contribution_unicode", values: { position: surrogate + 1 } };
  return null;
}

// The client seed: the contributions in seat order, one per line ("" for a timeout).
export function combineContributions(seeds) {
  return seeds.join("\n");
}

// Check a nard JSON match record: the contributions and the client seed made of them,
// the seed against the commitment, every die of the log against the formula, every
// roll of the games against the log. Returns {ok, verdict ("verified", "tampered" or
// "unverifiable"), unrevealed, commitmentOk, dice, rolls, problems, contributions,
// messages}: problems and messages are {key, values} for i18n's t().
export async function verifyRecord(record) {
  const outcome = await check(record);
  outcome.ok = outcome.verdict === "verified";
  outcome.messages = describe(outcome);
  return outcome;
}

async function check(record) {
  const dice = record && record.dice;
  const base = { verdict: "unverifiable", commitmentOk: null, dice: 0, rolls: 0, problems: [], contributions: [] };
  if (!dice || typeof dice !== "object") return { ...base, unrevealed: false };
  const { problems, contributions } = contributionProblems(dice);
  base.contributions = contributions;
  if (dice.server_seed === null || dice.server_seed === undefined) return { ...base, unrevealed: true };
  const out = { ...base, verdict: "tampered", problems };
  const seedHex = typeof dice.server_seed === "string" ? dice.server_seed.trim() : "";
  const commitment = typeof dice.commitment === "string" ? dice.commitment.trim() : "";
  const malformed = (field) => {
    problems.push({ key: "verify_malformed", values: { field } });
    return out;
  };
  if (!HEX_64.test(seedHex)) return malformed("dice.server_seed");
  if (!HEX_64.test(commitment)) return malformed("dice.commitment");
  out.commitmentOk = (await commitmentOf(seedHex)) === commitment.toLowerCase();
  if (!out.commitmentOk) {
    problems.push({ key: "verify_bad_commitment", values: {} });
    return out; // not the committed seed: no die can be trusted
  }
  if (typeof dice.client_seed !== "string" || LONE_SURROGATE.test(dice.client_seed)) return malformed("dice.client_seed");
  const log = dice.log === undefined ? [] : dice.log;
  if (!Array.isArray(log)) return malformed("dice.log");
  const preamble = dice.preamble === undefined ? 0 : dice.preamble;
  if (!Number.isInteger(preamble) || preamble < 0 || preamble > log.length) return malformed("dice.preamble");
  const key = await crypto.subtle.importKey("raw", hexToBytes(seedHex), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  for (let n = 0; n < log.length; n++) {
    const expected = await fairDie(key, dice.client_seed, n);
    if (expected !== log[n]) problems.push({ key: "verify_bad_die", values: { n: n + 1, expected, got: log[n] } });
  }
  out.dice = log.length;
  out.rolls = rollsAgainstLog(record.games || [], log, preamble, problems);
  if (!problems.length) out.verdict = "verified";
  return out;
}

// The contributions' rules, and the client seed as their join; an old record without
// contributions gives its client seed as it is.
function contributionProblems(dice) {
  const problems = [];
  if (dice.contributions === undefined) return { problems, contributions: [] };
  const list = dice.contributions;
  const wellFormed = (c) =>
    c && typeof c === "object" && Number.isInteger(c.seat) && c.seat >= 0 && typeof c.player === "string" &&
    typeof c.seed === "string" && (c.source === "player" || c.source === "timeout");
  if (!Array.isArray(list) || !list.length || !list.every(wellFormed) || list.some((c, i) => i && c.seat <= list[i - 1].seat)) {
    problems.push({ key: "verify_malformed", values: { field: "dice.contributions" } });
    return { problems, contributions: [] };
  }
  const contributions = list.map(({ seat, player, seed, source }) => ({ seat, player, seed, source }));
  for (const c of contributions) {
    const who = { seat: c.seat, player: c.player };
    if (c.source === "timeout") {
      if (c.seed !== "") problems.push({ key: "verify_contribution_timeout", values: who });
    } else {
      const problem = contributionProblem(c.seed);
      if (problem) problems.push({ key: problem.key, values: { ...who, ...problem.values } });
    }
  }
  if (combineContributions(contributions.map((c) => c.seed)) !== dice.client_seed) {
    problems.push({ key: "verify_client_seed", values: {} });
  }
  return { problems, contributions };
}

// Every roll the games show must be the next pair of the log, in the log's order. An
// opening roll may follow tied pairs (rolled again); player 0's die comes first in the
// log, the higher die opens, and the record shows the mover's die first. A roll
// recorded before a resignation was refused appears again when it is played: once.
function rollsAgainstLog(games, log, preamble, problems) {
  let used = preamble; // dice rolled before the first game (a chouette's seating)
  let rolls = 0;
  const text = (d) => `${d[0]}-${d[1]}`;
  games.forEach((game, g) => {
    let opening = true;
    let unplayed = null; // [player, dice text]: rolled, not yet played
    (game.actions || []).forEach((action, a) => {
      if (action.action !== "move" || !Array.isArray(action.dice)) return;
      const where = { game: game.number ?? g + 1, action: a + 1, got: text(action.dice) };
      if (unplayed && unplayed[0] === action.player && unplayed[1] === where.got) {
        unplayed = null;
        return;
      }
      unplayed = action.play === undefined || action.play === null ? [action.player, where.got] : null;
      if (opening) while (used + 1 < log.length && log[used] === log[used + 1]) used += 2;
      const pair = log.slice(used, used + 2);
      const dice = { first: used + 1, second: used + 2 };
      rolls += 1;
      used += 2;
      if (pair.length < 2) {
        problems.push({ key: "verify_log_ended", values: where });
      } else if (opening) {
        const starter = pair[0] > pair[1] ? 0 : 1;
        const expected = text([pair[starter], pair[1 - starter]]);
        if (action.player !== starter) {
          problems.push({ key: "verify_bad_opening", values: { ...where, ...dice, player: action.player, starter, expected } });
        } else if (where.got !== expected) {
          problems.push({ key: "verify_bad_roll", values: { ...where, ...dice, expected } });
        }
      } else if (where.got !== text(pair)) {
        problems.push({ key: "verify_bad_roll", values: { ...where, ...dice, expected: text(pair) } });
      }
      opening = false;
    });
  });
  if (used < log.length) problems.push({ key: "verify_unused_dice", values: { n: log.length - used } });
  return rolls;
}

// The lines the verify page shows: the verdict, then the first problems.
function describe(outcome) {
  if (outcome.verdict === "verified") return [{ key: "verify_ok", values: { n: outcome.dice } }];
  if (outcome.verdict === "unverifiable") {
    return [{ key: outcome.unrevealed ? "verify_unrevealed" : "verify_no_commitment", values: {} }];
  }
  const shown = outcome.problems.slice(0, SHOWN_PROBLEMS);
  const more = outcome.problems.length - shown.length;
  return more > 0 ? [...shown, { key: "verify_more", values: { n: more } }] : shown;
}

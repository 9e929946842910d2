// Recomputing a match's dice in the browser (docs/fair-dice.md), with WebCrypto.
"use strict";

const encoder = new TextEncoder();

function hexToBytes(hex) {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`not 64 hex digits: ${hex}`);
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

// Check a nard JSON match record: the seed against the commitment, every die in
// the log against the formula. {ok, unrevealed, commitmentOk, dice, mismatch}.
export async function verifyRecord(record) {
  const dice = record && record.dice;
  if (!dice || !dice.commitment) throw new Error("the record has no dice commitment");
  if (!dice.server_seed) return { ok: false, unrevealed: true };
  const commitmentOk = (await commitmentOf(dice.server_seed)) === dice.commitment.toLowerCase();
  if (!commitmentOk) return { ok: false, commitmentOk };
  const key = await crypto.subtle.importKey("raw", hexToBytes(dice.server_seed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const log = dice.log || [];
  for (let n = 0; n < log.length; n++) {
    const expected = await fairDie(key, dice.client_seed, n);
    if (expected !== log[n]) return { ok: false, commitmentOk, mismatch: { n, expected, got: log[n] } };
  }
  const unmatched = rollsNotInLog(record.games || [], log, dice.preamble || 0);
  if (unmatched) return { ok: false, commitmentOk, mismatch: unmatched };
  return { ok: true, commitmentOk, dice: log.length };
}

// Every roll the games show must be the next pair of the log (an opening roll
// may follow tied pairs, which were rolled again). The opening roll's pair is
// the mover's die first in the record, player 0's first in the log.
function rollsNotInLog(games, log, preamble) {
  let i = preamble; // dice rolled before the first game (a chouette's seating)
  const same = (a, b) => (a[0] === b[0] && a[1] === b[1]) || (a[0] === b[1] && a[1] === b[0]);
  for (const game of games) {
    let first = true;
    for (const action of game.actions || []) {
      if (!action.dice) continue;
      if (first) while (i + 1 < log.length && log[i] === log[i + 1]) i += 2;
      first = false;
      const pair = [log[i], log[i + 1]];
      if (i + 1 >= log.length || !same(pair, action.dice)) {
        return { n: i, expected: action.dice.join("-"), got: pair.join("-") };
      }
      i += 2;
    }
  }
  return null;
}

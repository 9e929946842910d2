// nard's page: sign-in, new game, lobby, the table, archive, rules, dice check.
// Plain ES modules, no build step; the server (nard serve) decides everything
// about the game: the page only shows it and sends the player's actions.
"use strict";

import { LANGUAGES, has, language, nativeDigits, num, pickLanguage, setLanguage, t } from "./i18n.js";
import { MoveInput, applyMove, checkerSpot, drawBoard, flip, playPath, pointAt } from "./board.js";
import { verifyRecord } from "./verify.js";

const $ = (selector, root = document) => root.querySelector(selector);
const main = () => $("#main");
let me = null;

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A contribution to the dice, made in the browser once the commitment is known.
function randomContribution() {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// -- the API ----------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET" && me) headers["X-CSRF-Token"] = me.csrf_token;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
    });
  } catch {
    throw new ApiError(0, "offline", "the server cannot be reached");
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || { code: "http_error", message: response.statusText };
    throw new ApiError(response.status, error.code, error.message);
  }
  return data;
}

// Refusals come with a code: shown in the page's language, with the server's
// own words where they carry details (which play, which field).
const DETAILED = new Set(["illegal_action", "invalid_action", "invalid_request", "invalid_rules"]);

function showError(error) {
  const box = $("#error");
  const key = `err_${error.code}`;
  let text = error.message;
  if (error.code && has(key)) text = DETAILED.has(error.code) ? `${t(key)}: ${error.message}` : t(key);
  box.textContent = `${t("error")}: ${text}`;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => (box.hidden = true), 6000);
}

// A guest who gives no name is named in the page's language ("Guest 4711", "مهمان 4711"):
// the server's default is English.
function guestName() {
  return t("guest_default", { number: String(1000 + (crypto.getRandomValues(new Uint32Array(1))[0] % 9000)) });
}

async function ensureGuest() {
  if (!me) me = await api("POST", "/api/guest", { name: guestName() });
  renderHeader();
}

// -- header and routing ----------------------------------------------------------

function renderHeader() {
  const nav = $("#nav");
  const links = [
    ["/", "nav_play"],
    ["/archive", "nav_archive"],
    ["/ratings", "nav_ratings"],
    ["/rules", "nav_rules"],
    ["/verify", "nav_verify"],
  ];
  nav.replaceChildren(
    ...links.map(([href, key]) => h("a", { href, "data-link": true, text: t(key) })),
  );
  const select = h(
    "select",
    { id: "language", "aria-label": "language", onchange: (e) => { setLanguage(e.target.value); renderHeader(); route(); } },
    ...Object.entries(LANGUAGES).map(([code, info]) =>
      h("option", { value: code, selected: code === language(), text: info.name }),
    ),
  );
  const who = me
    ? h("span", { id: "who" }, t("signed_in_as", { name: "" }),
      me.username ? h("a", { href: `/players/${encodeURIComponent(me.username)}`, "data-link": true, id: "my-profile", text: me.name }) : h("bdi", { text: me.name }),
      me.guest ? ` (${t("guest")})` : "")
    : h("span", { id: "who" });
  const out = me && !me.guest
    ? h("button", { class: "link", onclick: async () => { await api("POST", "/api/logout"); me = null; renderHeader(); route(); }, text: t("sign_out") })
    : null;
  $("#account").replaceChildren(who, out || "", select);
}

document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a[data-link]");
  if (!link) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});

function navigate(path) {
  history.pushState(null, "", path);
  route();
}

window.addEventListener("popstate", () => route());

let leaveView = () => {};

let routeRetry = null;

async function route() {
  clearTimeout(routeRetry);
  leaveView();
  leaveView = () => {};
  const path = location.pathname;
  try {
    if (path.startsWith("/play/")) await tableView(decodeURIComponent(path.slice(6)));
    else if (path === "/verify") verifyView();
    else if (path === "/archive") await archiveView();
    else if (path === "/rules") await rulesView();
    else if (path === "/ratings") await ratingsView();
    else if (path.startsWith("/players/")) await profileView(decodeURIComponent(path.slice(9)));
    else await homeView();
  } catch (error) {
    showError(error);
    if (error.code === "offline") {
      // The server is down (or the network): say so, and try again until it answers.
      main().replaceChildren(h("section", { class: "card", id: "offline", role: "status" }, h("p", { text: t("err_offline") })));
      routeRetry = setTimeout(route, 3000);
    }
  }
}

// -- home: sign-in, new game, lobby ------------------------------------------------

function field(label, input) {
  return h("label", { class: "field" }, h("span", { text: label }), input);
}

function checkbox(name, label, checked = false) {
  return h("label", { class: "check" }, h("input", { type: "checkbox", name, checked }), h("span", { text: label }));
}

// A table's terms in a line: length, time control, rated, a seek's rating range.
function tableTerms(table) {
  const parts = [table.match_length ? t("match_to", { n: table.match_length }) : t("money")];
  const tc = table.time_control;
  if (tc) {
    const preset = Object.entries(TIME_PRESETS).find(([, p]) => p.delay === tc.delay && p.reserve === tc.reserve && tc.per_point);
    parts.push(preset ? t(`tc_${preset[0]}_short`) : t("tc_custom", { delay: num(tc.delay), reserve: num(tc.reserve) }));
  }
  if (table.rated) parts.push(t("rated"));
  const seek = table.seek;
  if (seek && (seek.min_rating !== null || seek.max_rating !== null)) {
    parts.push(t("seek_range", { low: seek.min_rating === null ? "—" : num(seek.min_rating), high: seek.max_rating === null ? "—" : num(seek.max_rating) }));
  }
  return parts.join(" · ");
}

const TIME_PRESETS = { bullet: { delay: 6, reserve: 30 }, blitz: { delay: 10, reserve: 60 }, standard: { delay: 15, reserve: 120 } };

function hostOf(table) {
  const host = table.seats.find((s) => s.kind === "person");
  const rating = table.host_rating === null || table.host_rating === undefined ? "" : ` (${num(Math.round(table.host_rating))})`;
  return `${host ? host.name : "?"}${rating}`;
}

async function homeView() {
  const root = main();
  root.replaceChildren();
  if (!me || me.guest) root.append(signInBox());
  const [tables, live, challenges] = await Promise.all([
    api("GET", "/api/tables"), api("GET", "/api/live"), me ? api("GET", "/api/challenges") : Promise.resolve([]),
  ]);
  if (challenges.length) {
    root.append(h("section", { id: "challenges", class: "card" }, h("h2", { text: t("challenges") }),
      ...challenges.map((table) => h("div", { class: "lobby-row" },
        h("span", { text: t(table.rematch_of ? "rematch_from" : "challenge_from", { name: hostOf(table), terms: tableTerms(table) }) }),
        h("button", { class: "primary", "data-action": "accept-challenge", onclick: async () => {
          try { await api("POST", `/api/tables/${table.id}/join`, {}); navigate(`/play/${table.id}`); } catch (error) { showError(error); }
        }, text: t("accept_challenge") }),
        h("button", { "data-action": "decline-challenge", onclick: async () => {
          try { await api("POST", `/api/tables/${table.id}/decline`); route(); } catch (error) { showError(error); }
        }, text: t("decline_challenge") })))));
  }
  root.append(seekForm(), newGameForm());
  const lobby = h("section", { id: "lobby" }, h("h2", { text: t("lobby") }));
  root.append(lobby);
  if (!tables.length) lobby.append(h("p", { text: t("lobby_empty") }));
  for (const table of tables) {
    lobby.append(
      h("div", { class: "lobby-row" },
        h("span", { text: `${hostOf(table)} — ${tableTerms(table)}` }),
        h("button", { onclick: async () => {
          try {
            await ensureGuest();
            await api("POST", `/api/tables/${table.id}/join`, {});
            navigate(`/play/${table.id}`);
          } catch (error) { showError(error); }
        }, text: t("join") }),
      ),
    );
  }
  if (live.length) {
    root.append(h("section", { id: "live" }, h("h2", { text: t("live_tables") }),
      ...live.map((table) => h("div", { class: "lobby-row" },
        h("span", { text: `${table.seats.map(playerName).join(" — ")} · ${tableTerms(table)}` }),
        h("a", { href: `/play/${table.id}`, "data-link": true, class: "button", text: t("watch") })))));
  }
}

// "Find an opponent": a seek, paired at once with a compatible one, or left in the lobby.
function seekForm() {
  const length = h("input", { name: "seek_length", type: "number", min: 1, max: 64, value: 5 });
  const clock = h("select", { name: "seek_time" }, ...["untimed", "bullet", "blitz", "standard"].map((v) => h("option", { value: v, selected: v === "blitz", text: t(`tc_${v}`) })));
  const low = h("input", { name: "seek_min", type: "number", min: 0, max: 4000, placeholder: "—" });
  const high = h("input", { name: "seek_max", type: "number", min: 0, max: 4000, placeholder: "—" });
  const rated = h("input", { type: "checkbox", name: "seek_rated" });
  const challengee = h("input", { name: "challenge_name", maxlength: 32, autocomplete: "off" });
  const terms = () => ({ match_length: Number(length.value), time_control: clock.value, rated: rated.checked });
  return h("form", { id: "seek", class: "card", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await ensureGuest();
      const body = { ...terms() };
      if (low.value !== "") body.min_rating = Number(low.value);
      if (high.value !== "") body.max_rating = Number(high.value);
      const table = await api("POST", "/api/seeks", body);
      navigate(`/play/${table.id}`);
    } catch (error) { showError(error); }
  } },
    h("h2", { text: t("find_opponent") }),
    field(t("seek_length"), length), field(t("time_control"), clock),
    h("label", { class: "check" }, rated, h("span", { text: t("rated_match") })),
    field(t("seek_min"), low), field(t("seek_max"), high),
    h("button", { type: "submit", id: "seek-button", class: "primary", text: t("find_opponent") }),
    h("div", { class: "challenge" },
      field(t("challenge_player"), challengee),
      h("button", { type: "button", id: "challenge-button", onclick: async () => {
        try {
          await ensureGuest();
          const table = await api("POST", "/api/challenges", { ...terms(), opponent: "person", username: challengee.value.trim() });
          navigate(`/play/${table.id}`);
        } catch (error) { showError(error); }
      }, text: t("challenge") })));
}

function signInBox() {
  const name = h("input", { name: "guest_name", maxlength: 24, placeholder: t("guest_name") });
  const user = h("input", { name: "username", maxlength: 24, autocomplete: "username" });
  const pass = h("input", { name: "password", type: "password", maxlength: 200, autocomplete: "current-password" });
  const credentials = () => ({ username: user.value.trim(), password: pass.value });
  const signed = (data) => { me = data; renderHeader(); route(); };
  return h("section", { id: "signin", class: "card" },
    me ? null : h("form", { onsubmit: async (e) => {
      e.preventDefault();
      try { signed(await api("POST", "/api/guest", { name: name.value.trim() || guestName() })); } catch (error) { showError(error); }
    } }, field(t("guest_name"), name), h("button", { type: "submit", id: "guest-button", text: t("play_as_guest") })),
    h("form", { onsubmit: (e) => e.preventDefault() },
      field(t("username"), user), field(t("password"), pass),
      h("div", { class: "buttons" },
        h("button", { type: "button", onclick: async () => { try { signed(await api("POST", "/api/login", credentials())); } catch (error) { showError(error); } }, text: t("sign_in") }),
        h("button", { type: "button", onclick: async () => { try { signed(await api("POST", "/api/register", credentials())); } catch (error) { showError(error); } }, text: t("register") }),
      ),
    ),
  );
}

function newGameForm() {
  const level = h("select", { name: "level" }, ...["beginner", "intermediate", "expert", "world-class", "roller"].map((l) => h("option", { value: l, selected: l === "expert", text: t(`level_${l}`) })));
  const opponent = h("select", { name: "opponent" }, h("option", { value: "computer", text: t("computer") }), h("option", { value: "person", text: t("person") }), h("option", { value: "chouette", text: t("chouette") }));
  const players = h("input", { name: "players", type: "number", min: 3, max: 8, value: 3 });
  const computers = h("input", { name: "computers", type: "number", min: 0, max: 7, value: 2 });
  const colour = h("select", { name: "seat" }, h("option", { value: "0", text: t("white") }), h("option", { value: "1", text: t("black") }));
  const length = h("input", { name: "match_length", type: "number", min: 0, max: 64, value: 5 });
  const autos = h("input", { name: "automatic_doubles", type: "number", min: 0, max: 6, value: 0 });
  const gammon = h("select", { name: "backgammon" }, h("option", { value: "3", text: "3" }), h("option", { value: "2", text: "2" }));
  const clock = h("select", { name: "time_control" }, ...["untimed", "bullet", "blitz", "standard"].map((v) => h("option", { value: v, text: t(`tc_${v}`) })));
  let starting = false; // a table is being created: a second click must not make another
  const form = h("form", { id: "new-game", class: "card", onsubmit: async (event) => {
    event.preventDefault();
    if (starting) return;
    const data = new FormData(form);
    const body = {
      opponent: opponent.value,
      level: level.value,
      seat: Number(colour.value),
      match_length: Number(length.value),
      automatic_doubles: Number(autos.value),
      backgammon: Number(gammon.value),
      time_control: clock.value,
    };
    if (opponent.value === "chouette") {
      body.players = Number(players.value);
      body.computers = Number(computers.value);
      body.match_length = 0;
      body.time_control = "untimed";
    }
    for (const name of ["cube", "crawford", "holland", "jacoby", "beavers", "raccoons", "public", "rated"]) body[name] = data.get(name) === "on";
    const button = form.querySelector("#start");
    starting = true;
    button.disabled = true;
    try {
      await ensureGuest();
      const table = await api("POST", "/api/tables", body);
      // The form stays off until the table's page replaces it: a click that arrives
      // after the answer (a double click on a loaded machine) must not start another.
      navigate(`/play/${table.id}`);
    } catch (error) {
      showError(error);
      starting = false;
      button.disabled = false;
    }
  } },
    h("h2", { text: t("new_game") }),
    field(t("opponent"), opponent), field(t("level"), level), field(t("your_colour"), colour),
    field(t("chouette_players"), players), field(t("chouette_computers"), computers),
    field(t("match_length"), length),
    h("div", { class: "checks" },
      checkbox("cube", t("cube"), true), checkbox("crawford", t("crawford"), true), checkbox("holland", t("holland")),
      checkbox("jacoby", t("jacoby")), checkbox("beavers", t("beavers")), checkbox("raccoons", t("raccoons")),
      checkbox("public", t("public_table")), checkbox("rated", t("rated_match")),
    ),
    field(t("time_control"), clock),
    field(t("automatic_doubles"), autos), field(t("backgammon_counts"), gammon),
    h("button", { type: "submit", id: "start", class: "primary", text: t("start") }),
  );
  return form;
}

// Text kept left to right inside a sentence of either direction (moves, dice).
const ltr = (text) => `\u2066${text}\u2069`;

// The engine's cube advice ("Redouble, take", "Too good to double, pass", ...) in the
// page's language, part by part.
function cubeAdvice(action) {
  return action.split(", ").map((part) => {
    const key = `cube_${part.toLowerCase().replace(/[^a-z]+/g, "_").replace(/_+$/, "")}`;
    return has(key) ? t(key) : part;
  }).join(t("comma"));
}

// A seat's player as the page names it: the computer as "nard (level)" in the page's language.
const playerName = (seat) => (seat.kind === "computer" && seat.level ? t("computer_seat", { level: t(`level_${seat.level}`) }) : seat.kind === "open" ? t("seat_open") : seat.name);

// -- the table --------------------------------------------------------------------

// How long a checker takes to slide to its point, by the player's speed setting;
// no animation where the system asks for reduced motion, unless the player chose one.
const SPEEDS = { off: 0, fast: 150, normal: 320, slow: 650 };

function settings() {
  const reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const speed = localStorage.getItem("nard.speed") || (reduced ? "off" : "normal");
  return {
    homeRight: localStorage.getItem("nard.home") !== "left",
    swap: localStorage.getItem("nard.swap") === "1",
    speed: speed in SPEEDS ? speed : "normal",
    autoConfirm: localStorage.getItem("nard.autoconfirm") === "1",
    rollout: rolloutSettings(),
  };
}

// How the page's "Roll out" rolls out (sent with the request; the server checks them).
const ROLLOUT_TRIALS = [144, 324, 648, 1296, 2592];
const ROLLOUT_TRUNCATE = [7, 11, 17, 25];

function rolloutSettings() {
  const trials = Number(localStorage.getItem("nard.rollout.trials"));
  const truncate = Number(localStorage.getItem("nard.rollout.truncate"));
  return {
    trials: ROLLOUT_TRIALS.includes(trials) ? trials : 324,
    truncate: ROLLOUT_TRUNCATE.includes(truncate) ? truncate : 11,
    cubeful: localStorage.getItem("nard.rollout.cubeful") === "1",
  };
}

// Checkers borne off by the viewer and the other side, from a board in the viewer's view.
function borneOff(board) {
  let mine = 15;
  let theirs = 15;
  for (const n of board) {
    if (n > 0) mine -= n;
    else theirs += n;
  }
  return [mine, theirs];
}

async function tableView(id) {
  let table = await api("GET", `/api/tables/${encodeURIComponent(id)}`);
  // Joining by an invite link: sit down first (the socket then knows the seat).
  const invite = new URLSearchParams(location.search).get("invite");
  if (invite && table.you === null && table.status === "waiting") {
    await ensureGuest();
    table = await api("POST", `/api/tables/${table.id}/join`, { invite });
    history.replaceState(null, "", `/play/${table.id}`);
  }
  let input = null;
  let selected = null;
  let hint = null;
  let replayAt = null; // a step of the replay viewer, or null for the live game
  let steps = null;
  let analyses = null; // the table's analyses (newest first), once asked for
  let analysisTimer = null; // polls an analysis on its way
  let analysisMark = null; // {step, decision}: a decision of the analysis shown on the board
  let analysisPlies = 2;
  let rollout = null; // the caller's rollout of the decision at hand: {id, ...} while shown
  let rolloutTimer = null;
  let contributionDraft = randomContribution(); // made here, after the commitment was shown
  let deadlineTimer = null;
  let lastPlay = null; // {index (in the game's history), from: [place], to: [place]}
  let animation = null; // {frames: [{board, slides}], k, dice, diceMine, timer}
  let panel = null; // a finished game's result, shown until dismissed
  let lastTap = { point: null, time: 0 }; // for double clicks and double taps
  let playSent = false; // this page sent a play: its own checkers are not slid again
  let forced = false; // the only legal play was entered for the player
  let abandonAsked = false; // the first click on Abandon: the second confirms
  const root = main();
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.id = "board";
  svg.setAttribute("role", "img");
  const status = h("div", { id: "status", "aria-live": "polite" });
  const resultPanel = h("div", { id: "result-panel", class: "card", role: "dialog", "aria-live": "assertive", hidden: true });
  const controls = h("div", { id: "controls" });
  const side = h("aside", { id: "side" });
  const banner = h("div", { id: "connection", role: "status", hidden: true });
  root.replaceChildren(h("div", { id: "table" }, h("div", { id: "board-wrap" }, banner, svg, resultPanel, status, controls), side));

  // The live socket: the table after every change. A dropped connection (a server
  // restart, a network change) is retried with back-off; meanwhile the page says it
  // is offline and sends nothing. The server's first message on a (new) socket is
  // the table as it stands: the page takes it whatever its sequence number, as the
  // server is the authority (it may even have gone back, restored from a backup).
  const socketUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/tables/${encodeURIComponent(id)}`;
  const FINAL_CLOSES = new Set([4401, 4403, 4404]); // signed out, cross-origin, no such table
  let socket = null;
  let connection = "online"; // "online", "reconnecting" (the socket is down), "closed" (for good)
  let fresh = false; // the next message is a new socket's first: the whole table
  let retries = 0;
  let retryTimer = null;
  let left = false;
  let presence = null; // who is connected, at a table against a person (polled)
  let chat = []; // this page's channel's messages (players', or spectators')
  let chatDraft = "";
  let reporting = null; // the message being reported: its reason is asked for
  let reportDraft = ""; // the reason typed so far (emptied as a report is opened)
  const muted = new Set(JSON.parse(sessionStorage.getItem(`nard.muted.${id}`) || "[]"));
  const offline = () => connection !== "online";

  // A table from the server (the socket's, or an action's answer, which may come
  // after the socket brought the same or a later state). When it is newer, what
  // happened in between is shown: a play slid checker by checker (not the one this
  // page just sent), a finished game's result in a panel.
  function adopt(next, resync = false) {
    const before = table;
    if (next.seq < before.seq && !resync) return; // an answer the socket overtook
    table = next;
    if (next.seq <= before.seq) return;
    clearTimeout(animation && animation.timer);
    animation = null;
    const oldResults = (before.results || []).length;
    const newResults = (next.results || []).length;
    if (newResults > oldResults && next.game_number >= before.game_number) {
      panel = { number: newResults, result: next.results[newResults - 1] };
    }
    if (!before.game || !next.game || next.game_number !== before.game_number) {
      if (next.game_number !== before.game_number) lastPlay = null;
      return;
    }
    const old = before.game.history;
    const now = next.game.history;
    if (now.length <= old.length) return;
    const added = now.slice(old.length);
    const moves = added.filter((a) => a.kind === "move");
    if (moves.length !== 1) return;
    const action = moves[0];
    const index = old.length + added.indexOf(action);
    if (!action.play || !action.dice) { lastPlay = null; return; }
    const side = action.seat;
    const moverView = (board) => (side === 0 ? board : flip(board));
    const start = moverView(before.game.board);
    const path = playPath(start, moverView(next.game.board), action.dice);
    if (!path) return;
    const mine = side === viewer();
    const sent = mine && playSent;
    if (mine) playSent = false;
    const place = (p, to) => {
      if (p === 25) return mine ? "bar" : "their-bar";
      if (p === 0 && to) return mine ? "off" : "their-off";
      return mine ? p : 25 - p;
    };
    lastPlay = { index, from: path.map((m) => place(m[0], false)), to: path.map((m) => place(m[1], true)) };
    const ms = SPEEDS[settings().speed];
    if (sent || !ms) return;
    // The frames: the board after each single move, its checker sliding in from
    // where it stood (and a checker it hit sliding to the bar).
    const homeRight = orientation();
    const frames = [];
    let board = start;
    for (const [from, to] of path) {
      const toViewer = (b) => (mine ? b : flip(b));
      const shown = toViewer(board);
      const fromPlace = place(from, false);
      const count = fromPlace === "bar" ? shown[25] : fromPlace === "their-bar" ? -shown[0] : Math.abs(shown[fromPlace]);
      const slides = [{ place: place(to, true), from: checkerSpot(fromPlace, count - 1, homeRight), ms }];
      if (to >= 1 && board[to] === -1) slides.push({ place: mine ? "their-bar" : "bar", from: checkerSpot(place(to, true), 0, homeRight), ms });
      board = applyMove(board, [from, to]);
      frames.push({ board: toViewer(board), slides });
    }
    animation = { frames, k: 0, dice: action.dice, diceMine: mine, timer: null };
    const advance = () => {
      if (!animation) return;
      animation.k += 1;
      if (animation.k >= animation.frames.length) animation = null;
      else animation.timer = setTimeout(advance, ms + 80);
      render();
    };
    animation.timer = setTimeout(advance, ms + 80);
  }

  function connect() {
    clearTimeout(retryTimer);
    retryTimer = null;
    fresh = true;
    const current = new WebSocket(socketUrl);
    socket = current;
    current.addEventListener("message", (event) => {
      if (current !== socket) return;
      const message = JSON.parse(event.data);
      if (message.type === "table") {
        // Only newer states: the socket may still deliver the steps that led to
        // a state an action's answer already brought.
        const newer = message.table.seq > table.seq;
        const same = message.table.seq === table.seq;
        const changed = same && (message.table.status !== table.status || message.table.seats.some((s, i) => s.kind !== table.seats[i].kind));
        const resync = fresh;
        fresh = false;
        if (resync && connection !== "online") {
          retries = 0;
          connection = "online";
        }
        if (resync || newer || changed) {
          const moved = !(resync && same); // a move half entered survives a reconnection
          adopt(message.table, resync);
          if (moved) {
            input = null;
            selected = null;
            hint = null;
            rollout = null;
          }
          render();
        }
      } else if (message.type === "chat_removed") {
        const gone = new Set(message.ids);
        chat = chat.filter((m) => !gone.has(m.id));
        renderChat();
      } else if (message.type === "chat") {
        if (!chat.some((m) => m.id === message.message.id)) {
          chat = [...chat, message.message].slice(-100);
          renderChat();
        }
      } else if (message.type === "error") showError(message.error);
    });
    current.addEventListener("close", (event) => {
      if (current !== socket || left) return;
      if (FINAL_CLOSES.has(event.code)) {
        connection = "closed";
        showError({ code: "socket_closed", message: t("socket_closed", { reason: event.reason || event.code }) });
        render();
        return;
      }
      connection = "reconnecting";
      // 0.5 s, 1 s, 2 s ... up to 15 s, each within +-25 % so that the pages of a
      // restarted server do not all come back at the same instant.
      const delay = Math.min(15000, 500 * 2 ** retries) * (0.75 + Math.random() * 0.5);
      retries += 1;
      retryTimer = setTimeout(connect, delay);
      render();
    });
  }
  function reconnectNow() {
    if (connection !== "reconnecting" || left) return;
    connect();
  }
  const onOnline = () => reconnectNow();
  window.addEventListener("online", onOnline);
  // Escape puts a selected checker back. The replay by keyboard: the arrow keys step
  // (mirrored in RTL), Home and End jump, Escape goes back to the game as it ended.
  const onKey = (event) => {
    if (event.target.closest("input, textarea, select")) return;
    if (event.key === "Escape" && selected !== null) {
      selected = null; // a checker picked up is put back
      lastTap = { point: null, time: 0 }; // and the next click on it picks it up again
      render();
      return;
    }
    if (table.status !== "finished") return;
    const rtl = document.documentElement.dir === "rtl";
    const keys = { ArrowRight: rtl ? -1 : 1, ArrowLeft: rtl ? 1 : -1, Home: -Infinity, End: Infinity };
    if (event.key in keys) {
      event.preventDefault();
      stepReplay(keys[event.key]);
    } else if (event.key === "Escape" && replayAt !== null) {
      replayAt = null;
      render();
    }
  };
  document.addEventListener("keydown", onKey);
  connect();
  // The clocks count down between the server's views: from its own times (now_ms,
  // started_ms), plus how long ago this page received the view; a page whose
  // opponent's time is up asks the server to check (it decides).
  const clockSeen = new WeakMap();
  let flagged = null;
  function clockLeft(seat) {
    const c = table.clock;
    if (!clockSeen.has(c)) clockSeen.set(c, performance.now());
    let reserve = c.reserve_ms[seat];
    let delay = 0;
    if (c.running === seat && c.started_ms !== null && table.status === "playing") {
      const elapsed = c.now_ms - c.started_ms + (performance.now() - clockSeen.get(c));
      delay = Math.max(0, c.delay_ms - elapsed);
      reserve -= Math.max(0, elapsed - c.delay_ms);
    }
    return { reserve: Math.max(0, reserve), delay, running: c.running === seat && table.status === "playing" };
  }
  const clockFace = (ms) => {
    const s = Math.ceil(ms / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  function tickClocks() {
    if (!table.clock) return;
    for (const node of document.querySelectorAll("#score .clock")) {
      const seat = Number(node.dataset.seat);
      const left = clockLeft(seat);
      node.textContent = num(clockFace(left.reserve) + (left.running && left.delay > 0 ? ` +${Math.ceil(left.delay / 1000)}` : ""));
      node.classList.toggle("running", left.running);
      node.classList.toggle("short", left.running && left.reserve + left.delay < 15000);
      if (left.running && left.reserve <= 0 && left.delay <= 0 && seat !== mySeat() && mySeat() !== null && flagged !== table.clock.started_ms) {
        flagged = table.clock.started_ms;
        api("POST", `/api/tables/${table.id}/flag`).then((next) => { adopt(next); render(); }).catch(showError);
      }
    }
    const warning = $("#clock-warning");
    const me = mySeat();
    if (warning && me !== null && me !== undefined) {
      const left = clockLeft(me);
      const text = left.running && left.reserve + left.delay < 15000 ? t("time_short") : "";
      if (warning.textContent !== text) warning.textContent = text;
    }
  }
  const clockTimer = setInterval(tickClocks, 250);
  // Against a person: who is connected, polled; the countdown to a claim is shown.
  async function pollPresence() {
    if (left || isChouette() || table.status !== "playing" || table.seats.some((s) => s.kind === "computer")) return;
    try {
      const seen = await api("GET", `/api/tables/${table.id}/presence`);
      presence = { ...seen, received: performance.now() };
      render();
    } catch (error) { /* the next poll tries again */ }
  }
  const presenceTimer = setInterval(pollPresence, 5000);
  async function loadChat() {
    try {
      chat = (await api("GET", `/api/tables/${table.id}/chat`)).messages;
      renderChat();
    } catch (error) { /* shown on the next load */ }
  }
  setTimeout(loadChat, 0);
  setTimeout(pollPresence, 0); // once the view's helpers below are defined
  // A keep-alive, so that the server does not close a quiet socket as idle.
  const keepAlive = setInterval(() => { if (socket.readyState === WebSocket.OPEN) socket.send('{"type":"ping"}'); }, 60000);
  leaveView = () => {
    left = true;
    clearInterval(keepAlive);
    clearInterval(clockTimer);
    clearInterval(presenceTimer);
    clearTimeout(deadlineTimer);
    clearTimeout(retryTimer);
    window.removeEventListener("online", onOnline);
    document.removeEventListener("keydown", onKey);
    socket.close();
  };

  // While a request is out the table is marked busy and its buttons are off.
  let working = false; // a request is out: no button sends another (double clicks)
  async function busy(work) {
    if (offline() || working) return; // nothing is sent while the connection is down
    working = true;
    const node = $("#table");
    node.dataset.busy = "1";
    resultPanel.querySelectorAll("button").forEach((b) => (b.disabled = true));
    controls.querySelectorAll("button, select").forEach((b) => (b.disabled = true));
    try { await work(); } catch (error) {
      showError(error);
      if (error.code === "stale") adopt(await api("GET", `/api/tables/${table.id}`), true);
    } finally {
      working = false;
      delete node.dataset.busy;
      render();
    }
  }

  function send(command) {
    return busy(async () => {
      if (command.action === "play") playSent = true;
      adopt(await api("POST", `/api/tables/${table.id}/actions`, { ...command, seq: table.seq }));
      input = null;
      selected = null;
      hint = null;
      rollout = null;
    });
  }

  function post(path) {
    return busy(async () => { adopt(await api("POST", `/api/tables/${table.id}/${path}`)); });
  }

  const mySeat = () => table.you;
  const isChouette = () => table.kind === "chouette";
  // The game's side the board is drawn for: the caller's (in a chouette 0 is the
  // box, 1 the team), else side 0.
  const viewer = () => (table.side === null ? 0 : table.side);
  // A seat's name in the page's language: the computer's is "nard (level)".
  const seatName = (seat) => (table.seats[seat] ? playerName(table.seats[seat]) : "");
  const nameOf = (seat) => (seat === table.you ? `${seatName(seat)} (${t("seat_you")})` : seatName(seat));
  // A name as the server wrote it (in replay captions), as the page shows it.
  const shownName = (name) => {
    const seat = table.seats.findIndex((s) => s.name === name);
    return seat < 0 ? name || "" : seatName(seat);
  };
  // Who plays a side of the game: the seat itself, or in a chouette the box or the captain.
  const sideSeat = (side) => (isChouette() ? table.roles.indexOf(side === 0 ? "box" : "captain") : side);
  const nameOfSide = (side) => nameOf(sideSeat(side));

  function viewerBoard(board) {
    return viewer() === 0 ? board : flip(board);
  }

  function onPoint(point) {
    if (!input || offline()) return;
    if (selected !== null && input.destinations(selected).includes(point)) {
      input.move(selected, point);
      selected = null;
      lastTap = { point: null, time: 0 }; // a click after a move starts a new selection
      const only = input.options();
      const sources = [...new Set(only.map((o) => o.from))];
      if (sources.length === 1 && input.board[25] > 0) selected = sources[0];
      if (confirmIfDone()) return;
    } else if (input.destinations(point).length) {
      selected = point;
    } else {
      selected = null;
    }
    render();
  }

  function onDrag(point, event) {
    // Pressing on a checker of a highlighted destination is the start of a click that
    // moves there (onPoint), not a new selection: it used to select those checkers.
    if (input && selected !== null && selected !== point && input.destinations(selected).includes(point)) return;
    if (!input || offline() || !input.destinations(point).length) return;
    selected = point;
    render();
    const up = (e) => {
      window.removeEventListener("pointerup", up);
      const target = pointAt(svg, e.clientX, e.clientY);
      if (target !== null && target !== point && input && input.destinations(point).includes(target)) {
        lastTap = { point: null, time: 0 };
        onPoint(target);
      } else if (target === point && input) {
        // Released where it was pressed: a click (or tap). The second within 0.4 s on
        // the same checker is a double click: it moves by the first die in the
        // shown order that it can use (onto the tray where it bears off).
        const now = Date.now();
        const double = lastTap.point === point && now - lastTap.time < 400;
        lastTap = double ? { point: null, time: 0 } : { point, time: now };
        if (double && input.quickMove(point)) {
          selected = null;
          if (!confirmIfDone()) render();
        }
      }
    };
    window.addEventListener("pointerup", up);
  }

  function orientation() {
    const cfg = settings();
    return cfg.swap && table.game_number % 2 === 0 ? !cfg.homeRight : cfg.homeRight;
  }

  // The latest roll that could not be played, while the viewer's side has not played since.
  function noPlay(history) {
    for (let i = history.length - 1; i >= 0; i--) {
      const a = history[i];
      if (a.kind !== "move") continue;
      if (!a.play) return a;
      if (a.seat === viewer()) return null;
    }
    return null;
  }

  // With automatic confirmation, a complete play is sent at once; true if it was.
  function confirmIfDone() {
    if (!input || !settings().autoConfirm || offline()) return false;
    const done = input.complete();
    if (!done) return false;
    send({ action: "play", play: done.play });
    return true;
  }

  // A play typed in standard notation ("8/5 6/5", "bar/22*", "6/off"): the server reads it.
  function typedPlay(text) {
    const play = text.trim();
    if (!play) return;
    send({ action: "play", play });
  }

  function render() {
    const game = table.game;
    const cfg = settings();
    const homeRight = orientation();
    const myTurn = table.you_act;
    if (game && myTurn && game.decision === "play" && !input) {
      input = new MoveInput(viewerBoard(game.board), game.dice, game.legal_plays);
      // Only one play: entered for the player, who confirms it (or has it sent).
      forced = input.enterForced(game.legal_plays);
      if (forced && cfg.autoConfirm && !offline()) queueMicrotask(confirmIfDone);
    }
    if (!game || !myTurn || game.decision !== "play") input = null;

    // The board: a replay step, the move being entered, or the game as it stands.
    let board = game ? viewerBoard(game.board) : null;
    let dice = game ? game.dice : null;
    let cube = game ? game.cube : 1;
    // A double on offer: the cube shows the value it would go to, not its old one (64 at 1).
    if (game && (game.decision === "take or pass" || game.decision === "accept or beaver")) cube = game.cube * 2;
    let owner = game ? game.cube_owner : null;
    let off = game ? [game.off[viewer()], game.off[1 - viewer()]] : [0, 0];
    let diceMine = game && game.on_roll === viewer();
    let diceUsed = null;
    let onDice = null;
    let marks = null;
    let slides = null;
    let suggest = null;
    // Between turns the last roll stays on its side, dimmed: the computer's and the opponent's too.
    const last = game && game.history.length ? game.history[game.history.length - 1] : null;
    if (game && !dice && last && last.kind === "move" && last.dice) {
      dice = last.dice;
      diceMine = last.seat === viewer();
      diceUsed = [true, true];
    }
    if (game && lastPlay && lastPlay.index === game.history.length - 1) marks = { from: lastPlay.from, to: lastPlay.to };
    if (replayAt !== null && steps) {
      const step = steps[replayAt];
      board = viewerBoard(step.board);
      dice = step.dice;
      cube = step.cube;
      owner = step.cube_owner;
      off = [step.off[viewer()], step.off[1 - viewer()]];
      marks = null;
      // A decision of the analysis: its better play drawn on the board.
      const d = analysisMark && analysisMark.step === replayAt ? analysisMark.decision : null;
      if (d && d.best_moves) {
        const mine = d.seat === viewer();
        const place = (p, to) => (p === 25 ? (mine ? "bar" : "their-bar") : p === 0 && to ? (mine ? "off" : "their-off") : mine ? p : 25 - p);
        suggest = { from: d.best_moves.map((m) => place(m[0], false)), to: d.best_moves.map((m) => place(m[1], true)) };
      }
    } else if (animation) {
      const frame = animation.frames[animation.k];
      board = frame.board;
      off = borneOff(board);
      dice = animation.dice;
      diceMine = animation.diceMine;
      diceUsed = null;
      slides = frame.slides;
      marks = null;
    } else if (input) {
      board = input.board;
      dice = input.dice;
      diceMine = true;
      diceUsed = input.usedDice();
      if (input.moves.length) marks = null;
      else if (dice.length === 2 && dice[0] !== dice[1]) onDice = () => { if (input && input.swapDice()) { selected = null; render(); } };
    }
    if (board) {
      drawBoard(svg, {
        board,
        homeRight,
        colours: viewer() === 0 ? ["white", "black"] : ["black", "white"],
        off,
        dice,
        diceMine,
        diceUsed,
        onDice,
        marks,
        suggest,
        slides,
        cube: game && game.cube_in_play ? { value: cube } : null,
        cubeOwnerIsMe: owner === null ? null : owner === viewer(),
        selected,
        targets: input && selected !== null ? input.destinations(selected) : [],
        onPoint,
        onDrag,
        labels: { off: t("off"), number: num },
      });
      // For screen readers: the pips, the dice and whose turn it is, in words.
      svg.setAttribute("aria-label", game ? t("board_label", {
        mine: shownPips(game)[viewer()], theirs: shownPips(game)[1 - viewer()],
        dice: dice ? dice.join("-") : "—", cube: game.cube, position: game.position_id,
      }) : "");
      svg.dataset.positionId = game ? game.position_id : "";
    }
    renderStatus(game, myTurn);
    renderControls(game, myTurn);
    renderSide(game, cfg);
    renderPanel();
    renderConnection();
  }

  // Offline: a banner that says so (and when the next try is), everything that
  // would send disabled, the board dimmed.
  function renderConnection() {
    const node = $("#table");
    if (!offline()) {
      banner.hidden = true;
      banner.replaceChildren();
      if (node) delete node.dataset.offline;
      return;
    }
    if (node) node.dataset.offline = connection;
    banner.hidden = false;
    banner.dataset.state = connection;
    if (connection === "closed") {
      banner.replaceChildren(h("span", { text: t("connection_closed") }), h("button", { onclick: () => location.reload(), text: t("reload") }));
    } else {
      banner.replaceChildren(h("span", { text: t("connection_lost") }), h("button", { id: "reconnect", onclick: reconnectNow, text: t("reconnect_now") }));
    }
    controls.querySelectorAll("button, select").forEach((b) => (b.disabled = true));
    status.querySelectorAll("button").forEach((b) => (b.disabled = true));
  }

  // A game just finished: its result, the score, and what comes next.
  function renderPanel() {
    if (!panel || replayAt !== null) {
      resultPanel.hidden = true;
      resultPanel.replaceChildren();
      return;
    }
    const r = panel.result;
    const close = () => { panel = null; render(); };
    const lines = [
      h("h3", { text: t("game_n_over", { n: panel.number }) }),
      h("p", { class: "result", id: "panel-result", text: t("game_result", { name: nameOfSide(r.winner), n: r.points, kind: t(`result_${r.kind}`) }) }),
    ];
    if (!isChouette()) {
      const score = [0, 1].map((seat) => `${seatName(seat)} ${num(table.score[seat])}`).join(" – ");
      lines.push(h("p", { id: "panel-score", text: table.match_length ? `${t("score")}: ${score} (${t("match_to", { n: table.match_length })})` : `${t("score")}: ${score}` }));
    }
    if (table.status === "finished" && table.match_length && table.winner !== null) lines.push(h("p", { class: "result", id: "panel-match", text: t("match_over", { name: nameOf(table.winner) }) }));
    const buttons = [];
    if (table.between_games && mySeat() !== null) {
      buttons.push(button("next_game", () => { panel = null; post("next-game"); }, { class: "primary" }), button("end_session", () => { panel = null; post("end"); }));
    } else if (table.status === "finished") {
      if (!isChouette() && mySeat() !== null) buttons.push(button("rematch", rematch, { class: "primary" }));
      buttons.push(button("close", close));
    } else {
      buttons.push(button("continue", close, { class: "primary" }));
    }
    lines.push(h("div", { class: "buttons" }, ...buttons));
    resultPanel.replaceChildren(...lines);
    resultPanel.hidden = false;
  }

  // The same match again, same rules, colours and clocks: against the computer a new
  // table; against a person the rematch they offered, or one offered to them.
  function rematch() {
    return busy(async () => {
      const fresh = await api("POST", `/api/tables/${table.id}/rematch`);
      navigate(`/play/${fresh.id}`);
    });
  }

  function renderSeeding(lines) {
    if (table.you_contribute) {
      const input = h("input", { id: "contribution", maxlength: 64, value: contributionDraft, dir: "ltr", oninput: (e) => { contributionDraft = e.target.value; } });
      lines.push(h("div", { id: "seeding", class: "card" },
        h("h3", { text: t("seeding_title") }),
        h("p", { text: t("seeding_explain") }),
        h("p", { class: "commitment" }, `${t("dice_commitment")}: `, h("code", { text: table.dice_commitment })),
        h("label", {}, h("span", { text: `${t("contribution")}: ` }), input),
        h("button", { id: "contribute", class: "primary", "data-action": "contribute", text: t("contribute"),
          onclick: () => busy(async () => { adopt(await api("POST", `/api/tables/${table.id}/seed?seq=${table.seq}`, { contribution: contributionDraft })); }) })));
      return;
    }
    const mine = table.contributions.find((c) => c.seat === mySeat());
    if (mine && mine.given) lines.push(h("p", { id: "my-contribution", text: t("contribution_given", { seed: mine.seed }) }));
    const missing = table.contributions.filter((c) => !c.given && table.seats[c.seat].kind === "person");
    if (table.status !== "seeding" || !missing.length) return;
    const deadline = table.seed_deadline ? new Date(table.seed_deadline) : null;
    lines.push(h("p", { id: "waiting-contributions", text: t("waiting_contributions", { names: missing.map((c) => nameOf(c.seat)).join(", "), time: deadline ? deadline.toLocaleTimeString() : "—" }) }));
    clearTimeout(deadlineTimer);
    if (deadline && mySeat() !== null) {
      if (deadline <= new Date()) lines.push(button("start_without", () => post(`start?seq=${table.seq}`)));
      else deadlineTimer = setTimeout(render, deadline - new Date() + 500);
    }
  }

  function renderStatus(game, myTurn) {
    if (replayAt !== null && steps) {
      // Replaying: the step's own caption (kept on every render, not set once beside it).
      status.replaceChildren(h("p", { id: "replay-text", text: caption(steps[replayAt]) }));
      const d = analysisMark && analysisMark.step === replayAt ? analysisMark.decision : null;
      if (d) status.append(h("p", { id: "analysis-note", class: `skill-${d.skill || "none"}` }, decisionText(d)));
      return;
    }
    const lines = [];
    if (table.status === "waiting" || table.status === "seeding") renderSeeding(lines);
    if (table.status === "waiting") {
      const link = `${location.origin}/play/${table.id}?invite=${table.invite || ""}`;
      lines.push(h("p", { text: t("waiting") }), h("input", { id: "invite-link", readonly: true, value: link, onclick: (e) => e.target.select() }));
    } else if (table.status === "finished") {
      if (table.abandoned) lines.push(h("p", { class: "result", id: "abandoned", text: t("abandoned") }));
      if (table.timed_out !== null && table.timed_out !== undefined) lines.push(h("p", { class: "result", id: "timed-out", text: t(`forfeit_${table.forfeit || "clock"}`, { name: nameOf(table.timed_out) }) }));
      if (table.abandoned) { /* said above */ } else if (table.match_length && table.winner !== null) lines.push(h("p", { class: "result", text: t("match_over", { name: nameOf(table.winner) }) }));
      else lines.push(h("p", { class: "result", text: t("session_over") }));
    } else if (game) {
      if (game.result) lines.push(h("p", { class: "result", text: t("game_over", { name: nameOfSide(game.result.winner), n: game.result.points }) }));
      if (game.decision === "take or pass" || game.decision === "accept or beaver") lines.push(h("p", { text: t("offers_double", { name: nameOfSide(game.on_roll), n: game.cube * 2 }) }));
      if (input && forced && !input.moves.length) forced = false;
      if (input && forced) lines.push(h("p", { id: "forced", text: t("forced_play") }));
      const stuck = noPlay(game.history);
      if (stuck) lines.push(h("p", { id: "no-play", text: t("no_legal_play", { name: nameOfSide(stuck.seat), dice: stuck.dice.join("-") }) }));
      if (table.votes.length) lines.push(h("p", { id: "proposal", text: t("team_proposes", { name: nameOfSide(1) }) }));
      if (game.resignation) lines.push(h("p", { text: t("offers_resign", { name: nameOfSide(game.on_roll), n: game.resignation }) }));
      if (table.to_act !== null) lines.push(h("p", { class: myTurn ? "turn mine" : "turn", text: myTurn ? t("your_turn") : t("their_turn", { name: table.waiting_for.map(nameOf).join(", ") }) }));
      if (table.you === null) lines.push(h("p", { text: t("spectating") }));
    }
    if (hint) lines.push(hint);
    if (rollout) lines.push(rolloutView(rollout));
    status.replaceChildren(...lines);
  }

  function button(key, onclick, extra = {}) {
    return h("button", { onclick, "data-action": key, ...extra, text: t(key) });
  }

  function renderControls(game, myTurn) {
    const buttons = [];
    if (table.between_games && mySeat() !== null) {
      buttons.push(button("next_game", () => post("next-game"), { class: "primary" }), button("end_session", () => post("end")));
    } else if ((table.status === "waiting" || table.status === "seeding") && mySeat() !== null) {
      buttons.push(button("end_session", () => post("end")));
    } else if (table.status === "finished" && !isChouette() && mySeat() !== null) {
      buttons.push(button("rematch", rematch));
    }
    // Against the computer a match can be left unfinished, after a second click;
    // against a person, leaving a match in play loses it.
    const onlyComputers = table.seats.every((s, n) => n === mySeat() || s.kind === "computer");
    const leavable = onlyComputers ? table.status === "playing" || table.status === "seeding" : !isChouette() && table.status === "playing";
    if (mySeat() !== null && leavable) {
      if (abandonAsked) {
        buttons.push(h("span", { id: "abandon-ask", text: t(onlyComputers ? "abandon_sure" : "leave_sure") }),
          button("abandon_confirm", () => { abandonAsked = false; post(`abandon?seq=${table.seq}`); }, { class: "danger" }),
          button("cancel", () => { abandonAsked = false; render(); }));
      } else {
        buttons.push(button(onlyComputers ? "abandon" : "leave_match", () => { abandonAsked = true; render(); }));
      }
    }
    // The opponent away past the grace period: the match may be claimed.
    const away = presence && presence.seats.find((s) => s.seat !== mySeat() && !s.connected && s.claimable_at);
    if (away && mySeat() !== null && table.status === "playing" && !isChouette()) {
      const left = Date.parse(away.claimable_at) - Date.parse(presence.now) - (performance.now() - presence.received);
      buttons.push(h("span", { id: "away", role: "status", text: left > 0
        ? t("opponent_away", { name: nameOf(away.seat), time: num(Math.ceil(left / 1000)) })
        : t("opponent_gone", { name: nameOf(away.seat) }) }));
      if (left <= 0) buttons.push(button("claim_match", () => busy(async () => { adopt(await api("POST", `/api/tables/${table.id}/claim`)); render(); }), { class: "primary" }));
    }
    if (game && myTurn) {
      const legal = new Set(game.legal_actions);
      if (input) {
        const done = input.complete();
        buttons.push(button("confirm", () => send({ action: "play", play: done.play }), { class: "primary", disabled: !done }));
        buttons.push(button("undo", () => { input.undo(); selected = null; render(); }, { disabled: !input.moves.length }));
        buttons.push(button("undo_all", () => { input.reset(); selected = null; render(); }, { disabled: input.moves.length < 2 }));
        const typed = h("input", { id: "play-text", dir: "ltr", autocomplete: "off", spellcheck: "false", maxlength: 60, placeholder: "8/5 6/5", "aria-label": t("type_play"),
          onkeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); typedPlay(e.target.value); } } });
        buttons.push(h("span", { class: "typed" }, typed, button("play_typed", () => typedPlay(typed.value))));
      }
      for (const action of ["roll", "double", "agree", "refuse", "take", "pass", "beaver", "raccoon", "accept", "reject"]) {
        if (legal.has(action)) buttons.push(button(action, () => send({ action }), { class: action === "roll" || action === "take" ? "primary" : "" }));
      }
      if (legal.has("resign")) {
        const menu = h("select", { "aria-label": t("resign"), id: "resign", onchange: (e) => { const points = Number(e.target.value); e.target.value = ""; if (points) send({ action: "resign", points }); } },
          h("option", { value: "", text: `${t("resign")}…` }),
          h("option", { value: "1", text: t("resign_single") }),
          h("option", { value: "2", text: t("resign_gammon") }),
          h("option", { value: "3", text: t("resign_backgammon") }));
        buttons.push(menu);
      }
      if (!isChouette() && table.seats.some((s) => s.kind === "computer")) {
        buttons.push(button("hint", showHint));
        if (game.decision === "play" || legal.has("double")) buttons.push(button("roll_out", startRollout));
      }
    }
    controls.replaceChildren(...buttons);
  }

  async function showHint() {
    try {
      const data = await api("GET", `/api/tables/${table.id}/hint`);
      if (data.kind === "plays") {
        // The equity the plays are ranked by: cubeful at the table's score where given.
        const value = (p) => (p.cubeful_equity ?? p.equity);
        hint = h("ol", { id: "hint" }, ...data.plays.slice(0, 5).map((p) => h("li", {}, h("bdi", { dir: "ltr", text: p.play }), `  ${value(p) >= 0 ? "+" : ""}${value(p).toFixed(3)}`)));
      } else {
        hint = h("p", { id: "hint", text: t("hint_cube", { action: cubeAdvice(data.action) }) });
      }
      render();
    } catch (error) { showError(error); }
  }

  // A rollout of the decision at hand, made by a worker: progress, then its figures.
  async function startRollout() {
    try {
      const row = await api("POST", `/api/tables/${table.id}/rollouts`, settings().rollout);
      rollout = { ...row, seq: table.seq };
      pollRollout();
    } catch (error) { showError(error); }
  }

  async function pollRollout() {
    clearTimeout(rolloutTimer);
    if (!rollout) return;
    try {
      const rows = (await api("GET", `/api/tables/${table.id}/rollouts`)).rollouts;
      const row = rows.find((r) => r.id === rollout.id);
      if (!row || !rollout) return;
      rollout = { ...row, seq: rollout.seq };
      if (row.status === "queued" || row.status === "running") rolloutTimer = setTimeout(pollRollout, 1000);
      render();
    } catch (error) { showError(error); }
  }

  function rolloutView(row) {
    if (row.status === "failed") return h("p", { id: "rollout", class: "error", text: t("rollout_failed") });
    if (row.status !== "done") {
      return h("p", { id: "rollout", "aria-live": "polite" }, t("rollout_running", { done: num(row.done), total: num(row.total || 0) }),
        h("progress", { max: row.total || 1, value: row.done || 0 }));
    }
    const r = row.result;
    const signed = (v) => `${v >= 0 ? "+" : ""}${v.toFixed(3)}`;
    const how = h("p", { text: t("rollout_done", { trials: num(r.trials), truncate: num(r.truncate), seed: num(r.seed), kind: t(r.cubeful_trials ? "rollout_cubeful" : "rollout_cubeless") }) });
    if (r.kind === "plays") {
      return h("div", { id: "rollout" }, how,
        h("ol", {}, ...r.candidates.map((c) => h("li", {}, h("bdi", { dir: "ltr", text: c.name }),
          `  ${num(signed(c.cubeful))} (± ${num(c.standard_error.toFixed(3))})`))));
    }
    return h("div", { id: "rollout" }, how,
      h("p", { text: t("hint_cube", { action: cubeAdvice(r.action) }) }),
      h("p", { dir: "ltr", text: `ND ${signed(r.no_double)} · D/T ${signed(r.double_take)} · D/P ${signed(r.double_pass)}` }));
  }

  // The pip counts shown: the replay step's while replaying (its board is side 0's
  // view), else the game's.
  function shownPips(game) {
    if (replayAt === null || !steps) return game.pips;
    const board = steps[replayAt].board;
    let mine = 25 * Math.max(0, board[25]);
    let theirs = 25 * Math.max(0, -board[0]);
    for (let p = 1; p <= 24; p++) {
      if (board[p] > 0) mine += p * board[p];
      else if (board[p] < 0) theirs += (25 - p) * -board[p];
    }
    return [mine, theirs];
  }

  function renderSide(game, cfg) {
    const seatsShown = isChouette() ? table.seats.map((_, i) => i) : [0, 1];
    const sideOf = (seat) => (isChouette() ? (table.roles[seat] === "box" ? 0 : 1) : seat);
    const score = h("div", { id: "score" },
      h("h3", { text: (isChouette() ? t("chouette") : table.match_length ? t("match_to", { n: table.match_length }) : t("money")) + (table.rated ? ` · ${t("rated")}` : "") }),
      ...seatsShown.map((seat) => h("div", { class: `player seat${seat}${table.waiting_for.includes(seat) ? " acting" : ""}`, "data-role": table.roles[seat] || null },
        h("span", { class: `swatch ${sideOf(seat) === 0 ? "white" : "black"}` }),
        h("span", { class: "name", text: nameOf(seat) + (table.roles[seat] ? ` — ${t(`role_${table.roles[seat]}`)}` : "") }),
        h("span", { class: "points", text: num(replayAt !== null && steps ? steps[replayAt].score[seat] : table.score[seat]) }),
        game && (!isChouette() || table.roles[seat] === "box" || table.roles[seat] === "captain") ? h("span", { class: "pips", text: `${t("pips")} ${num(shownPips(game)[sideOf(seat)])}` }) : null,
        table.clock ? h("span", { class: "clock", "data-seat": String(seat), dir: "ltr", role: "timer", "aria-label": t("clock_of", { name: nameOf(seat) }) }) : null)),
      table.clock ? h("p", { id: "clock-warning", class: "warning", "aria-live": "assertive" }) : null,
      table.crawford ? h("p", { class: "crawford", text: t("crawford_game") }) : null,
    );
    // While replaying, the list follows the step: that game's steps so far, this one marked.
    let historyList;
    if (replayAt !== null && steps) {
      const number = steps[replayAt].game;
      const shown = steps.map((step, i) => ({ step, i })).filter(({ step, i }) => step.game === number && i <= replayAt);
      historyList = h("ol", { id: "history", class: "replaying" }, ...shown.map(({ step, i }) => h("li", { "aria-current": i === replayAt ? "step" : null, class: i === replayAt ? "current" : null, text: caption(step) })));
    } else {
      historyList = h("ol", { id: "history" }, ...(game ? game.history : []).map((a) => h("li", {}, ...describe(a))));
    }
    const orientation = h("label", { class: "check" },
      h("span", { text: `${t("orientation")}: ` }),
      h("select", { id: "orientation", onchange: (e) => { localStorage.setItem("nard.home", e.target.value); render(); } },
        h("option", { value: "right", selected: cfg.homeRight, text: t("bottom_right") }),
        h("option", { value: "left", selected: !cfg.homeRight, text: t("bottom_left") })));
    const swap = h("label", { class: "check" }, h("input", { type: "checkbox", id: "swap", checked: cfg.swap, onchange: (e) => { localStorage.setItem("nard.swap", e.target.checked ? "1" : "0"); render(); } }), h("span", { text: t("swap_sides") }));
    const speed = h("label", { class: "check" },
      h("span", { text: `${t("animation")}: ` }),
      h("select", { id: "speed", onchange: (e) => { localStorage.setItem("nard.speed", e.target.value); render(); } },
        ...Object.keys(SPEEDS).map((v) => h("option", { value: v, selected: v === cfg.speed, text: t(`speed_${v}`) }))));
    const fair = h("div", { id: "fair" },
      h("p", {}, `${t("dice_commitment")}: `, h("code", { text: table.dice_commitment })),
      h("p", {}, `${t("contributions_title")}: `),
      h("ul", { id: "contributions" }, ...table.contributions.map((c) => h("li", {}, `${nameOf(c.seat)}: `,
        c.given && c.source !== "timeout" ? h("code", { dir: "ltr", text: c.seed }) : t(c.given ? "contribution_timeout" : "contribution_pending")))),
      h("p", {}, `${t("server_seed")}: `, table.server_seed ? h("code", { id: "server-seed", text: table.server_seed }) : t("not_revealed")),
      table.status === "finished" ? h("a", { href: `/verify?table=${table.id}`, "data-link": true, text: t("verify_link") }) : null,
    );
    const downloads = h("p", { class: "downloads" }, `${t("download")}: `,
      ...(isChouette() ? ["json"] : ["mat", "sgf", "json"]).map((fmt) => h("a", { href: `/api/tables/${table.id}/record.${fmt}`, download: true, dir: "ltr", text: fmt.toUpperCase() })));
    const replay = table.status === "finished" ? h("div", { id: "replay" },
      h("button", { "data-action": "replay_back", onclick: () => stepReplay(-1), text: t("step_back") }),
      h("span", { id: "replay-step", text: replayAt === null ? t(steps && !steps.length ? "replay_nothing" : "replay") : `${num(replayAt + 1)} / ${num(steps.length)}` }),
      h("button", { "data-action": "replay_forward", onclick: () => stepReplay(1), text: t("step_forward") })) : null;
    const scrolled = $("#history", side);
    const following = !scrolled || scrolled.scrollTop + scrolled.clientHeight >= scrolled.scrollHeight - 4;
    const auto = h("label", { class: "check" }, h("input", { type: "checkbox", id: "autoconfirm", checked: cfg.autoConfirm, onchange: (e) => { localStorage.setItem("nard.autoconfirm", e.target.checked ? "1" : "0"); } }), h("span", { text: t("auto_confirm") }));
    // In Persian and Arabic: numbers in the language's own digits, if the player likes.
    const digits = language() === "en" ? null : h("label", { class: "check" },
      h("span", { text: `${t("digits")}: ` }),
      h("select", { id: "digits", onchange: (e) => { localStorage.setItem("nard.digits", e.target.value); render(); } },
        h("option", { value: "latin", selected: !nativeDigits(), text: "123" }),
        h("option", { value: "native", selected: nativeDigits(), text: language() === "fa" ? "۱۲۳" : "١٢٣" })));
    if (table.clock) queueMicrotask(tickClocks); // the fresh clocks show their time at once
    const focus = focusIn(side); // taken before the panel's controls leave the page
    side.replaceChildren(score, h("h3", { text: t("history") }), historyList, replay || "", analysisSection(), h("section", { id: "chat" }), orientation, swap, speed, auto, digits || "", rolloutOptions(cfg.rollout), fair, downloads);
    renderChat(false);
    refocus(focus, side);
    // The newest entry in view, unless the player scrolled back to read.
    if (following) historyList.scrollTop = historyList.scrollHeight;
    else historyList.scrollTop = scrolled.scrollTop;
  }

  // The rollout's settings, where "Roll out" is offered: trials, turns per trial, cubeful.
  function rolloutOptions(current) {
    if (table.status === "finished" || isChouette() || !table.seats.some((s) => s.kind === "computer")) return "";
    const store = (key, value) => { localStorage.setItem(`nard.rollout.${key}`, value); };
    return h("fieldset", { id: "rollout-options" }, h("legend", { text: t("rollout_options") }),
      h("label", { class: "check" }, h("span", { text: `${t("rollout_trials")}: ` }),
        h("select", { id: "rollout-trials", onchange: (e) => store("trials", e.target.value) },
          ...ROLLOUT_TRIALS.map((n) => h("option", { value: String(n), selected: n === current.trials, text: num(n) })))),
      h("label", { class: "check" }, h("span", { text: `${t("rollout_truncate")}: ` }),
        h("select", { id: "rollout-truncate", onchange: (e) => store("truncate", e.target.value) },
          ...ROLLOUT_TRUNCATE.map((n) => h("option", { value: String(n), selected: n === current.truncate, text: num(n) })))),
      h("label", { class: "check" }, h("input", { type: "checkbox", id: "rollout-cubeful", checked: current.cubeful, onchange: (e) => store("cubeful", e.target.checked ? "1" : "0") }),
        h("span", { text: t("rollout_cubeful_option") })));
  }

  // The side panel is drawn afresh when the table moves on, and the chat when a
  // message comes: a player typing in the chat (or a report's reason), or moving
  // through the settings by keyboard, keeps the control's focus and caret.
  function focusIn(root) {
    const active = document.activeElement;
    if (!root || !active || !active.id || !root.contains(active)) return null;
    const text = typeof active.selectionStart === "number";
    return { id: active.id, start: text ? active.selectionStart : null, end: text ? active.selectionEnd : null };
  }

  function refocus(focus, root) {
    const control = focus && root.querySelector(`#${CSS.escape(focus.id)}`);
    if (!control) return;
    control.focus();
    if (focus.start !== null && typeof control.setSelectionRange === "function") control.setSelectionRange(focus.start, focus.end);
  }

  // -- chat: the players' channel, or the spectators'; text shown as text ---------
  function renderChat(keepFocus = true) {
    const section = $("#chat");
    if (!section || !me) return;
    const focus = keepFocus ? focusIn(section) : null;
    const mine = (m) => me && m.player === me.id;
    const list = h("ol", { id: "chat-messages", "aria-live": "polite" },
      ...chat.filter((m) => !muted.has(m.player)).map((m) => h("li", { "data-id": String(m.id) },
        h("bdi", { class: "chat-name", text: m.name }), ": ", h("bdi", { class: "chat-text", text: m.text }),
        mine(m) ? "" : h("span", { class: "chat-tools" },
          h("button", { class: "link", "data-action": "mute", title: t("chat_mute"), onclick: () => { muted.add(m.player); sessionStorage.setItem(`nard.muted.${id}`, JSON.stringify([...muted])); renderChat(); }, text: t("chat_mute") }),
          h("button", { class: "link", "data-action": "report", onclick: () => { reporting = m; reportDraft = ""; renderChat(); }, text: t("chat_report") })))));
    const input = h("input", { id: "chat-input", maxlength: 300, value: chatDraft, autocomplete: "off", "aria-label": t("chat_say"),
      oninput: (e) => { chatDraft = e.target.value; },
      onkeydown: (e) => { if (e.key === "Enter") { e.preventDefault(); sendChat(); } } });
    const parts = [h("h3", { text: t(mySeat() === null ? "chat_spectators" : "chat_players") }), list,
      h("div", { class: "chat-say" }, input, h("button", { id: "chat-send", onclick: sendChat, text: t("chat_send") }))];
    if (reporting) {
      const reason = h("input", { id: "report-reason", maxlength: 500, placeholder: t("report_reason"), value: reportDraft,
        oninput: (e) => { reportDraft = e.target.value; } });
      parts.push(h("div", { id: "report", class: "card" },
        h("p", { text: t("report_about", { name: reporting.name }) }), reason,
        h("button", { "data-action": "send-report", onclick: async () => {
          const about = reporting;
          try {
            await api("POST", "/api/reports", { reason: reportDraft.trim() || "chat", message_id: about.id });
            if (about.username) await api("POST", `/api/players/${encodeURIComponent(about.username)}/block`);
            reporting = null;
            muted.add(about.player);
            renderChat();
          } catch (error) { showError(error); }
        }, text: t("report_and_block") }),
        h("button", { onclick: () => { reporting = null; renderChat(); }, text: t("cancel") })));
    }
    section.replaceChildren(...parts);
    list.scrollTop = list.scrollHeight;
    refocus(focus, section);
  }

  async function sendChat() {
    const text = chatDraft.trim();
    if (!text) return;
    try {
      const message = await api("POST", `/api/tables/${table.id}/chat`, { text });
      chatDraft = "";
      if (!chat.some((m) => m.id === message.id)) chat = [...chat, message].slice(-100);
      renderChat();
      $("#chat-input") && $("#chat-input").focus();
    } catch (error) { showError(error); }
  }

  // -- analysis: queued on the server, made by a worker, shown here ---------------
  function analysisSection() {
    if (table.status !== "finished" || isChouette()) return "";
    if (!table.game && !table.results.length) return ""; // ended before any move
    if (analyses === null) { loadAnalyses(); return h("section", { id: "analysis" }, h("h3", { text: t("analysis") })); }
    const latest = analyses[0] || null;
    const done = analyses.find((a) => a.status === "done") || null;
    const parts = [h("h3", { text: t("analysis") })];
    if (latest && (latest.status === "queued" || latest.status === "running")) {
      const text = latest.status === "queued" ? t("analysis_queued") : t("analysis_running", { done: num(latest.done), total: num(latest.total || 0) });
      parts.push(h("p", { id: "analysis-progress", "aria-live": "polite" }, text,
        h("progress", { max: latest.total || 1, value: latest.done || 0 })));
    } else if (latest && latest.status === "failed") {
      parts.push(h("p", { id: "analysis-failed", class: "error", text: t("analysis_failed") }));
    }
    if (done) parts.push(analysisReport(done));
    const busy = latest && (latest.status === "queued" || latest.status === "running");
    if (!busy && (!done || done.plies < 2)) {
      const choices = [0, 1, 2].filter((p) => !done || p > done.plies);
      if (!choices.includes(analysisPlies)) analysisPlies = choices[choices.length - 1];
      parts.push(h("p", { class: "analyse" },
        h("select", { id: "analysis-plies", "aria-label": t("analysis_depth"), onchange: (e) => { analysisPlies = Number(e.target.value); } },
          ...choices.map((p) => h("option", { value: p, selected: p === analysisPlies, text: t("plies", { n: num(p) }) }))),
        " ",
        h("button", { "data-action": "analyse", onclick: requestAnalysis, text: t(done ? "analyse_deeper" : "analyse") })));
    }
    return h("section", { id: "analysis" }, ...parts);
  }

  async function loadAnalyses() {
    try {
      analyses = (await api("GET", `/api/tables/${table.id}/analyses`)).analyses;
      const latest = analyses[0];
      clearTimeout(analysisTimer);
      if (latest && (latest.status === "queued" || latest.status === "running")) analysisTimer = setTimeout(loadAnalyses, 1000);
      render();
    } catch (error) { showError(error); }
  }

  async function requestAnalysis() {
    try {
      await ensureGuest();
      await api("POST", `/api/tables/${table.id}/analyses`, { plies: analysisPlies });
      await loadAnalyses();
    } catch (error) { showError(error); }
  }

  function analysisReport(done) {
    const result = done.result;
    const [a, b] = result.players;
    const money = !result.match_length;
    const fixed = (v, digits = 1) => num(v.toFixed(digits));
    const outcome = (v) => (money ? fixed(v, 2) : `${fixed(100 * v)}%`);
    const rows = [
      ["analysis_unforced", (p) => num(p.unforced_moves)],
      ["analysis_checker_rate", (p) => fixed(p.checker_error_rate)],
      ["analysis_cube_rate", (p) => fixed(p.cube_error_rate)],
      ["analysis_error_rate", (p) => fixed(p.error_rate)],
      ["analysis_pr", (p) => fixed(p.pr)],
      ["analysis_luck", (p) => fixed(p.luck, 2)],
      ["analysis_luck_adjusted", (p) => outcome(p.luck_adjusted_result)],
    ];
    if (!money) rows.push(["analysis_rating", (p) => (p.rating === null ? "—" : num(p.rating))]);
    const figures = h("table", { id: "analysis-figures" },
      h("tr", {}, h("th", { text: t("plies", { n: num(done.plies) }) }), h("th", {}, h("bdi", { text: seatName(0) })), h("th", {}, h("bdi", { text: seatName(1) }))),
      ...rows.map(([key, value]) => h("tr", {}, h("td", { text: t(key) }), h("td", { text: value(a) }), h("td", { text: value(b) }))));
    const graphs = result.games.map((g) => h("figure", { class: "equity-graph" },
      equityGraph(g, money), h("figcaption", { text: t("analysis_game", { n: g.number, name: seatName(0) }) })));
    const marked = result.decisions.filter((d) => d.skill && d.counted);
    const errors = h("ol", { id: "analysis-errors" }, ...marked.map((d) => h("li", {},
      h("button", { class: `skill-${d.skill}`, "data-game": d.game, onclick: () => showDecision(d) }, decisionText(d)))));
    return h("div", { id: "analysis-report" }, figures, ...graphs,
      h("h4", { text: t("analysis_errors", { n: num(marked.length) }) }), marked.length ? errors : h("p", { text: t("analysis_no_errors") }));
  }

  // Player 0's equity after every play of a game: match winning chances, or points.
  function equityGraph(game, money) {
    const W = 240; const H = 70;
    const svgEl = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svgEl.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svgEl.setAttribute("class", "graph");
    svgEl.setAttribute("role", "img");
    svgEl.setAttribute("aria-label", t("analysis_graph"));
    const pts = game.graph;
    if (!pts.length) return svgEl;
    const last = Math.max(1, ...pts.map((p) => p[0]));
    const top = money ? Math.max(1, ...pts.map((p) => Math.abs(p[1]))) : 1;
    const lo = money ? -top : 0;
    const y = (v) => H - 4 - (H - 8) * (v - lo) / ((money ? top : 1) - lo);
    const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    line.setAttribute("points", pts.map((p) => `${(4 + (W - 8) * p[0] / last).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "));
    line.setAttribute("class", "equity");
    const mid = document.createElementNS("http://www.w3.org/2000/svg", "line");
    mid.setAttribute("x1", 4); mid.setAttribute("x2", W - 4);
    mid.setAttribute("y1", y(money ? 0 : 0.5)); mid.setAttribute("y2", y(money ? 0 : 0.5));
    mid.setAttribute("class", "even");
    svgEl.append(mid, line);
    return svgEl;
  }

  // A decision as a line: who, the roll, what was played, the better play, the loss.
  function decisionText(d) {
    const who = seatName(d.seat);
    const loss = num(d.error.toFixed(3));
    if (d.kind === "checker") {
      return t("analysis_checker_line", { who, dice: ltr(d.dice.join("-")), played: ltr(d.played), best: ltr(d.best), loss, skill: t(`skill_${d.skill}`) });
    }
    return t("analysis_cube_line", { who, played: t(`cube_${d.played.toLowerCase().replace(/ /g, "_")}`), best: t(`cube_${d.best.toLowerCase().replace(/ /g, "_")}`), loss, skill: t(`skill_${d.skill}`) });
  }

  // Step the board to a decision: the replay step that shows its position.
  async function showDecision(d) {
    try {
      if (!steps) steps = (await api("GET", `/api/tables/${table.id}/replay`)).steps;
      const same = (s) => s.game === d.game && s.board.length === d.board.length && s.board.every((n, i) => n === d.board[i]);
      let index = -1;
      if (d.kind === "checker") index = steps.findIndex((s) => same(s) && s.dice && [...s.dice].sort().join() === [...d.dice].sort().join());
      if (index < 0) index = steps.findIndex(same);
      if (index < 0) return;
      replayAt = index;
      analysisMark = { step: index, decision: d };
      render();
    } catch (error) { showError(error); }
  }

  async function stepReplay(delta) {
    try {
      if (!steps) steps = (await api("GET", `/api/tables/${table.id}/replay`)).steps;
      if (!steps.length) { replayAt = null; render(); return; } // ended before any move
      if (!Number.isFinite(delta)) replayAt = delta > 0 ? steps.length - 1 : 0;
      else replayAt = replayAt === null ? (delta > 0 ? 0 : steps.length - 1) : Math.min(steps.length - 1, Math.max(0, replayAt + delta));
      render();
    } catch (error) { showError(error); }
  }

  // One entry of the moves list: the move text kept left to right inside RTL text.
  function describe(action) {
    const who = `${seatName(sideSeat(action.seat))}: `;
    if (action.kind === "move") return [who, h("bdi", { dir: "ltr", text: `${action.dice.join("-")} ${action.play || "—"}` })];
    if (action.kind === "double" || action.kind === "beaver" || action.kind === "raccoon") return [who, `${t(action.kind)} → `, h("bdi", { text: String(action.cube) })];
    if (action.kind === "resign") return [who, `${t("resign")} `, h("bdi", { text: String(action.resign) })];
    if (action.kind === "drop") return [who, t("pass")];
    return [who, t(action.kind)];
  }

  // A replay step's caption in the page's language (moves isolated left to right).
  function caption(step) {
    const c = step.caption;
    if (!c || !has(`step_${c.kind}`)) return step.text;
    return t(`step_${c.kind}`, {
      who: shownName(c.who),
      dice: c.dice ? ltr(c.dice.join("-")) : "",
      play: ltr(c.play || "—"),
      cube: c.cube ?? "",
      points: c.points ?? "",
    });
  }

  render();
}

// -- archive ----------------------------------------------------------------------

async function archiveView() {
  const tables = await api("GET", "/api/my-tables");
  const rows = tables.map((table) => h("li", {},
    h("a", { href: `/play/${table.id}`, "data-link": true, text: `${table.seats.map(playerName).join(" — ")}` }),
    ` · ${table.match_length ? t("match_to", { n: table.match_length }) : t("money")} · ${t(`status_${table.status}`)} · `,
    table.analysed !== null && table.analysed !== undefined ? h("a", { href: `/play/${table.id}`, "data-link": true, class: "analysed", text: t("archive_analysed", { n: table.analysed }) }) : "",
    table.analysed !== null && table.analysed !== undefined ? " · " : "",
    h("bdi", { dir: "ltr", class: "date", text: table.created_at.slice(0, 16).replace("T", " ") })));
  main().replaceChildren(h("section", { class: "card" }, h("h2", { text: t("nav_archive") }), rows.length ? h("ul", { id: "archive" }, ...rows) : h("p", { text: t("archive_empty") })));
  if (me && !me.guest) main().append(passwordForm());
}

function passwordForm() {
  const current = h("input", { name: "current", type: "password", maxlength: 200, autocomplete: "current-password" });
  const fresh = h("input", { name: "new", type: "password", maxlength: 200, autocomplete: "new-password" });
  const done = h("p", { id: "password-done", "aria-live": "polite" });
  return h("form", { id: "password", class: "card", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await api("POST", "/api/password", { current: current.value, new: fresh.value });
      current.value = fresh.value = "";
      done.textContent = t("password_changed");
    } catch (error) { showError(error); }
  } },
    h("h2", { text: t("change_password") }),
    field(t("current_password"), current), field(t("new_password"), fresh),
    h("button", { type: "submit", text: t("change_password") }), done);
}

// -- ratings: the leaderboard and players' profiles ---------------------------------

const rating = (value) => num(Math.round(value));
const profileLink = (username, name) => h("a", { href: `/players/${encodeURIComponent(username)}`, "data-link": true }, h("bdi", { text: name }));

async function ratingsView() {
  const board = await api("GET", "/api/leaderboard?limit=100");
  const rows = board.map((e) => h("tr", {},
    h("td", { text: num(e.rank) }), h("td", {}, profileLink(e.username, e.name)),
    h("td", { class: "number", text: rating(e.rating) }), h("td", { class: "number", text: num(e.rated_matches) }),
    h("td", { class: "number", text: num(e.experience) })));
  main().replaceChildren(h("section", { class: "card", id: "leaderboard" },
    h("h2", { text: t("nav_ratings") }),
    rows.length
      ? h("table", {}, h("thead", {}, h("tr", {}, ...["rank", "player", "rating", "rated_matches", "experience"].map((k) => h("th", { text: t(`ratings_${k}`) })))), h("tbody", {}, ...rows))
      : h("p", { text: t("ratings_empty") }),
    h("p", { class: "note", text: t("ratings_note") })));
}

async function profileView(username) {
  const p = await api("GET", `/api/players/${encodeURIComponent(username)}`);
  const facts = [
    [t("ratings_rating"), rating(p.rating)],
    [t("ratings_rank"), p.rank ? num(p.rank) : "—"],
    [t("ratings_experience"), num(p.experience)],
    [t("profile_rated"), t("profile_record", { won: num(p.rated_wins), lost: num(p.rated_matches - p.rated_wins) })],
    [t("profile_finished"), num(p.matches_finished)],
    [t("profile_error_rate"), p.average_error_rate === null ? "—" : t("profile_error_rate_value", { rate: num(p.average_error_rate.toFixed(1)), n: num(p.analysed_matches) })],
  ];
  const history = p.history.slice().reverse().map((m) => h("tr", {},
    h("td", {}, h("bdi", { dir: "ltr", class: "date", text: m.at.slice(0, 16).replace("T", " ") })),
    h("td", {}, h("a", { href: `/play/${m.table_id}`, "data-link": true, text: m.opponent })),
    h("td", { class: "number", text: rating(m.opponent_rating) }),
    h("td", { text: t("match_to", { n: m.match_length }) }),
    h("td", { text: t(m.won ? "profile_won" : "profile_lost") }),
    h("td", { class: "number", dir: "ltr", text: num(`${m.rating_after >= m.rating_before ? "+" : ""}${(m.rating_after - m.rating_before).toFixed(1)}`) }),
    h("td", { class: "number", text: rating(m.rating_after) })));
  main().replaceChildren(h("section", { class: "card", id: "profile" },
    h("h2", {}, h("bdi", { text: p.name })),
    h("dl", { class: "facts" }, ...facts.flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { text: v })])),
    p.history.length ? ratingChart(p.history) : h("p", { text: t("profile_no_rated") }),
    p.history.length ? h("table", { id: "rating-history" },
      h("thead", {}, h("tr", {}, ...["date", "opponent", "opponent_rating", "length", "result", "change", "rating"].map((k) => h("th", { text: t(`profile_${k}`) })))),
      h("tbody", {}, ...history)) : "",
    p.recent.length ? h("h3", { text: t("profile_recent") }) : "",
    p.recent.length ? h("ul", { id: "recent-matches" }, ...p.recent.map((table) => h("li", {},
      h("a", { href: `/play/${table.id}`, "data-link": true, text: table.seats.map(playerName).join(" — ") }),
      ` · ${tableTerms(table)} · ${t(`status_${table.status}`)}`))) : ""));
}

// The rating after each rated match, oldest on the left, as a line (SVG).
function ratingChart(history) {
  const values = [history[0].rating_before, ...history.map((m) => m.rating_after)];
  const least = Math.min(...values), most = Math.max(...values);
  const span = Math.max(most - least, 20);
  const low = (least + most) / 2 - span / 2; // a small range centred, not pinned to the floor
  const width = 600, height = 180, pad = 36;
  const x = (i) => pad + (i * (width - 2 * pad)) / Math.max(values.length - 1, 1);
  const y = (v) => height - pad / 2 - ((v - low) * (height - pad)) / span;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("id", "rating-chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", t("profile_chart", { from: rating(values[0]), to: rating(values[values.length - 1]), n: num(history.length) }));
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    svg.append(el);
    return el;
  };
  for (const v of [least, most]) {
    add("line", { x1: pad, x2: width - pad, y1: y(v), y2: y(v), class: "grid" });
    add("text", { x: 2, y: y(v) + 4, class: "axis" }, rating(v));
  }
  add("polyline", { points: values.map((v, i) => `${x(i)},${y(v)}`).join(" "), class: "rating-line" });
  values.forEach((v, i) => add("circle", { cx: x(i), cy: y(v), r: 3, class: i && history[i - 1].won ? "won" : i ? "lost" : "start" }));
  return svg;
}

// -- rules ------------------------------------------------------------------------

async function rulesView() {
  const lang = language();
  const response = await fetch(`/static/rules/${lang}.md`);
  const text = await response.text();
  const section = h("section", { class: "card rules", id: "rules" });
  if (t("rules_note")) section.append(h("p", { class: "note", text: t("rules_note") }));
  let list = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) { list = null; continue; }
    const heading = line.match(/^(#{1,4})\s+(.*)$/);
    const item = line.match(/^(?:[-*•]|\d+[.)])\s+(.*)$/);
    if (heading) { list = null; section.append(h(`h${Math.min(4, heading[1].length + 1)}`, { text: heading[2] })); }
    else if (item) { if (!list) { list = h("ul"); section.append(list); } list.append(h("li", { text: item[1].replace(/\*\*/g, "") })); }
    else { list = null; section.append(h("p", { text: line.replace(/\*\*/g, "") })); }
  }
  main().replaceChildren(section);
}

// -- dice verification ----------------------------------------------------------------

function verifyView() {
  const tableId = h("input", { id: "verify-table", name: "table", dir: "ltr", value: new URLSearchParams(location.search).get("table") || "" });
  const record = h("textarea", { id: "verify-record", rows: 8, dir: "ltr", spellcheck: "false" });
  const result = h("div", { id: "verify-result", "aria-live": "polite" });
  const run = async () => {
    try {
      let text = record.value.trim();
      if (!text && tableId.value.trim()) {
        const response = await fetch(`/api/tables/${encodeURIComponent(tableId.value.trim())}/record.json`);
        if (!response.ok) throw new Error((await response.json()).error.message);
        text = await response.text();
        record.value = text;
      }
      const outcome = await verifyRecord(JSON.parse(text));
      result.className = outcome.ok ? "ok" : "bad";
      result.replaceChildren(...outcome.messages.map((m) => h("p", { text: t(m.key, m.values) })));
      if (outcome.contributions.length) {
        result.append(h("p", { text: t("verify_contributions") }), h("ul", { id: "verify-contributions" },
          outcome.contributions.map((c) => h("li", { text: t(c.source === "timeout" ? "verify_contribution_missed" : "verify_contribution_row", c) }))));
      }
    } catch (error) { result.className = "bad"; result.textContent = `${t("error")}: ${error.message}`; }
  };
  main().replaceChildren(h("section", { class: "card", id: "verify" },
    h("h2", { text: t("verify_title") }), h("p", { text: t("verify_intro") }),
    field(t("table_id"), tableId), field(t("record_json"), record),
    h("button", { id: "verify-button", class: "primary", onclick: run, text: t("verify") }), result));
  if (tableId.value) run();
}

// -- start ----------------------------------------------------------------------------

async function start() {
  setLanguage(pickLanguage());
  try { me = await api("GET", "/api/me"); } catch { me = null; }
  renderHeader();
  await route();
}

start();

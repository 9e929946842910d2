// The board in SVG, and checker moves entered by clicks or drags.
//
// Boards are 26 numbers from one side's view ("mover's view"): points 1-24 hold
// that side's checkers as positive counts and the other side's as negative ones,
// 25 is that side's bar and 0 the other side's bar (a count <= 0). The server
// sends the game board from seat 0's side; flip() turns it to seat 1's.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const W = 1000;
const H = 760;
const FRAME = 20;
const TRAY = 70; // bear-off tray width
const BAR = 60;
const POINT_W = (W - 2 * FRAME - TRAY - BAR) / 12;
const POINT_H = 300;
const R = POINT_W / 2 - 3; // checker radius
const CUBE = 48; // the cube's side
// Checkers on the bar start clear of the cube in the middle; an owned cube sits in
// the middle of its owner's half of the tray, clear of 15 borne-off checkers.
const BAR_START = CUBE / 2 + R + 6;
const TRAY_CUBE = 90;

export function flip(board) {
  const out = new Array(26).fill(0);
  for (let i = 1; i <= 24; i++) out[25 - i] = -board[i];
  out[0] = -board[25];
  out[25] = -board[0];
  return out;
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

// -- legal single moves (the client only proposes; the server decides) ---------

function isHome(board) {
  if (board[25] > 0) return false;
  for (let p = 7; p <= 24; p++) if (board[p] > 0) return false;
  return true;
}

function singleMoves(board, die) {
  const moves = [];
  const sources = board[25] > 0 ? [25] : [];
  if (!sources.length) for (let p = 24; p >= 1; p--) if (board[p] > 0) sources.push(p);
  const home = isHome(board);
  for (const from of sources) {
    const to = from - die;
    if (to >= 1) {
      if (board[to] >= -1) moves.push([from, to]);
    } else if (home) {
      if (to === 0) moves.push([from, 0]);
      else {
        let higher = false;
        for (let p = from + 1; p <= 6; p++) if (board[p] > 0) higher = true;
        if (!higher) moves.push([from, 0]);
      }
    }
  }
  return moves;
}

function applyMove(board, [from, to]) {
  const b = board.slice();
  b[from] -= 1;
  if (to >= 1) {
    if (b[to] === -1) {
      b[to] = 0;
      b[0] -= 1; // hit: to the opponent's bar
    }
    b[to] += 1;
  }
  return b;
}

const key = (board) => board.join(",");

// Every board reachable from `board` with `dice` (in any order), with the moves
// leading there; a path stops where no die can be played.
function finals(board, dice, out = new Map(), path = []) {
  let moved = false;
  const tried = new Set();
  for (let i = 0; i < dice.length; i++) {
    if (tried.has(dice[i])) continue;
    tried.add(dice[i]);
    const rest = dice.slice(0, i).concat(dice.slice(i + 1));
    for (const move of singleMoves(board, dice[i])) {
      moved = true;
      finals(applyMove(board, move), rest, out, path.concat([move]));
    }
  }
  if (!moved && !out.has(key(board))) out.set(key(board), path);
  return out;
}

// The single moves of a play that took the mover's `before` board to `after` with
// `dice` (both boards in the mover's view), or null if no such play exists.
export function playPath(before, after, dice) {
  const all = dice[0] === dice[1] ? [dice[0], dice[0], dice[0], dice[0]] : dice.slice();
  const path = finals(before, all).get(key(after));
  return path === undefined ? null : path;
}

export { applyMove };

// The move entry of one turn: the checkers moved so far, what may move next.
export class MoveInput {
  constructor(board, dice, legalPlays) {
    this.start = board;
    // The larger die first: the one a double click uses first (a click on the dice swaps them).
    const [a, b] = dice[0] >= dice[1] ? [dice[0], dice[1]] : [dice[1], dice[0]];
    this.dice = a === b ? [a, a, a, a] : [a, b];
    this.legal = new Map(legalPlays.map((p) => [key(p.board), p]));
    this.reset();
  }

  reset() {
    this.board = this.start.slice();
    this.left = this.dice.slice();
    this.moves = [];
    this.used = []; // the die each move used
  }

  // When only one play is legal, its moves entered (the player still confirms);
  // returns whether it did.
  enterForced(legalPlays) {
    if (legalPlays.length !== 1 || !legalPlays[0].moves || !legalPlays[0].moves.length) return false;
    for (const [from, to] of legalPlays[0].moves) {
      if (!this.move(from, to)) {
        this.reset();
        return false;
      }
    }
    if (this.complete()) return true;
    this.reset();
    return false;
  }

  // Take back the last move only.
  undo() {
    if (!this.moves.length) return;
    const moves = this.moves.slice(0, -1);
    const used = this.used.slice(0, -1);
    this.reset();
    for (let i = 0; i < moves.length; i++) this._apply(moves[i], used[i]);
  }

  // Swap the order of the two dice (before any is used): which one a double click takes first.
  swapDice() {
    if (this.moves.length || this.dice[0] === this.dice[1]) return false;
    this.dice = [this.dice[1], this.dice[0]];
    this.left = this.dice.slice();
    return true;
  }

  // Which of the dice, in their shown order, are used by the moves so far.
  usedDice() {
    const left = this.left.slice();
    return this.dice.map((die) => {
      const i = left.indexOf(die);
      if (i < 0) return true;
      left.splice(i, 1);
      return false;
    });
  }

  // A double click's move from `from`: by the first die in the shown order that can
  // move this checker towards a legal play (onto the tray where it bears off).
  quickMove(from) {
    const options = this.options().filter((o) => o.from === from);
    for (const die of this.left) {
      const option = options.find((o) => o.die === die);
      if (option) {
        this._apply([option.from, option.to], option.die);
        return true;
      }
    }
    return false;
  }

  _apply(move, die) {
    this.board = applyMove(this.board, move);
    this.left.splice(this.left.indexOf(die), 1);
    this.moves.push(move);
    this.used.push(die);
  }

  // Single moves now possible that still lead to a legal play.
  options() {
    const out = [];
    const seen = new Set();
    for (let i = 0; i < this.left.length; i++) {
      const die = this.left[i];
      if (seen.has(die)) continue;
      seen.add(die);
      const rest = this.left.slice(0, i).concat(this.left.slice(i + 1));
      for (const move of singleMoves(this.board, die)) {
        const after = applyMove(this.board, move);
        for (const k of finals(after, rest).keys()) {
          if (this.legal.has(k)) {
            out.push({ from: move[0], to: move[1], die });
            break;
          }
        }
      }
    }
    return out;
  }

  destinations(from) {
    return [...new Set(this.options().filter((o) => o.from === from).map((o) => o.to))];
  }

  move(from, to) {
    // The die in the shown order first, where two could make this move.
    const options = this.options().filter((o) => o.from === from && o.to === to);
    if (!options.length) return false;
    const option = this.left.map((die) => options.find((o) => o.die === die)).find(Boolean);
    this._apply([from, to], option.die);
    return true;
  }

  // The legal play the board now shows, once no further move is possible.
  complete() {
    if (this.options().length) return null;
    return this.legal.get(key(this.board)) || null;
  }
}

// -- drawing ---------------------------------------------------------------------

// Screen x of a point's centre, for the viewer's home board at bottom right
// (mirrored for bottom left), and whether it is on the bottom row.
function pointPlace(point, homeRight) {
  const bottom = point <= 12;
  // Columns 0-11 from the left: points 12..1 along the bottom, 13..24 along the top.
  let column = bottom ? 12 - point : point - 13;
  if (!homeRight) column = 11 - column;
  const leftEdge = homeRight ? FRAME : FRAME + TRAY;
  let x = leftEdge + column * POINT_W + POINT_W / 2;
  if (column >= 6) x += BAR;
  return { x, bottom };
}

// Where the checker number `index` (0 at the edge) of a place is drawn, in the
// viewer's board: a point 1-24, "bar" (the viewer's, bottom half), "their-bar",
// "off" (the viewer's tray end) or "their-off".
export function checkerSpot(place, index, homeRight) {
  const leftEdge = homeRight ? FRAME : FRAME + TRAY;
  const barCx = leftEdge + 6 * POINT_W + BAR / 2;
  const trayCx = (homeRight ? leftEdge + 12 * POINT_W + BAR : FRAME) + TRAY / 2;
  const i = Math.min(index, 4);
  if (place === "bar") return { x: barCx, y: H / 2 + BAR_START + i * 2 * R };
  if (place === "their-bar") return { x: barCx, y: H / 2 - BAR_START - i * 2 * R };
  if (place === "off") return { x: trayCx, y: H - FRAME - 2 - index * 14 };
  if (place === "their-off") return { x: trayCx, y: FRAME + index * 14 + 8 };
  const { x, bottom } = pointPlace(place, homeRight);
  return { x, y: bottom ? H - FRAME - R - i * 2 * R : FRAME + R + i * 2 * R };
}

export function drawBoard(svg, state) {
  // state: {board (viewer's side), viewerSeat, homeRight, colours: [c0, c1],
  //         off: [mine, theirs], dice, diceMine, diceUsed, onDice(), cube,
  //         cubeOwnerIsMe (true/false/null), selected, targets, onPoint(point),
  //         marks: {from: [place], to: [place]} (the last play), slides:
  //         [{place, from: {x, y}, ms}] (checkers on their way to a place), labels,
  //         suggest: {from: [place], to: [place]} (a play to show on the board before it)}
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const homeRight = state.homeRight;
  const [mine, theirs] = state.colours;
  el("rect", { x: 0, y: 0, width: W, height: H, rx: 14, class: "frame" }, svg);
  const leftEdge = homeRight ? FRAME : FRAME + TRAY;
  const barX = leftEdge + 6 * POINT_W;
  el("rect", { x: leftEdge, y: FRAME, width: 12 * POINT_W + BAR, height: H - 2 * FRAME, class: "felt" }, svg);
  el("rect", { x: barX, y: FRAME, width: BAR, height: H - 2 * FRAME, class: "bar" }, svg);
  const trayLeft = homeRight ? leftEdge + 12 * POINT_W + BAR : FRAME;
  el("rect", { x: trayLeft, y: FRAME, width: TRAY, height: H - 2 * FRAME, class: "tray" }, svg);

  const targets = new Set(state.targets || []);
  for (let p = 1; p <= 24; p++) {
    const { x, bottom } = pointPlace(p, homeRight);
    const baseY = bottom ? H - FRAME : FRAME;
    const tipY = bottom ? H - FRAME - POINT_H : FRAME + POINT_H;
    const tri = el(
      "polygon",
      {
        points: `${x - POINT_W / 2},${baseY} ${x + POINT_W / 2},${baseY} ${x},${tipY}`,
        class: `point ${p % 2 ? "odd" : "even"}${targets.has(p) ? " target" : ""}`,
        "data-point": p,
      },
      svg,
    );
    tri.addEventListener("click", () => state.onPoint && state.onPoint(p));
    // The point's number is part of it: a click there is a click on the point.
    const label = el("text", { x, y: bottom ? H - 4 : 15, class: "label", "data-point": p }, svg);
    label.textContent = state.labels.number ? state.labels.number(p) : String(p);
    label.addEventListener("click", () => state.onPoint && state.onPoint(p));
    const count = state.board[p];
    if (count) drawStack(svg, x, bottom, Math.abs(count), count > 0 ? mine : theirs, p, state);
  }
  // The bars: the viewer's checkers on the bottom half, the opponent's on top.
  const barMine = state.board[25];
  const barTheirs = -state.board[0];
  const barCx = barX + BAR / 2;
  const barHit = el("rect", { x: barX, y: H / 2, width: BAR, height: H / 2 - FRAME, class: "barzone", "data-point": 25 }, svg);
  barHit.addEventListener("click", () => state.onPoint && state.onPoint(25));
  if (barMine) drawStack(svg, barCx, true, barMine, mine, 25, state, H / 2 + BAR_START);
  if (barTheirs) drawStack(svg, barCx, false, barTheirs, theirs, 0, state, H / 2 - BAR_START);

  // Borne-off checkers in the tray (the viewer's at the bottom).
  // The whole tray takes a bear-off: its checkers and label let clicks through (CSS).
  const off = el("rect", { x: trayLeft, y: FRAME, width: TRAY, height: H - 2 * FRAME, class: `offzone${targets.has(0) ? " target" : ""}`, "data-point": 0 }, svg);
  off.addEventListener("click", () => state.onPoint && state.onPoint(0));
  for (let i = 0; i < state.off[0]; i++) el("rect", { x: trayLeft + 10, y: H - FRAME - 8 - i * 14, width: TRAY - 20, height: 11, rx: 3, class: `offchecker c${mine}`, "data-place": "off" }, svg);
  for (let i = 0; i < state.off[1]; i++) el("rect", { x: trayLeft + 10, y: FRAME + i * 14 + 2, width: TRAY - 20, height: 11, rx: 3, class: `offchecker c${theirs}`, "data-place": "their-off" }, svg);
  const offLabel = el("text", { x: trayLeft + TRAY / 2, y: H / 2 + 20, class: "label traylabel" }, svg);
  offLabel.textContent = state.labels.off;

  // The cube: in the middle of the bar while centred, else on its owner's side.
  if (state.cube) {
    const cy = state.cubeOwnerIsMe === null ? H / 2 : state.cubeOwnerIsMe ? H / 2 + TRAY_CUBE : H / 2 - TRAY_CUBE;
    const cx = state.cubeOwnerIsMe === null ? barCx : trayLeft + TRAY / 2;
    el("rect", { x: cx - CUBE / 2, y: cy - CUBE / 2, width: CUBE, height: CUBE, rx: 7, class: "cube", "data-cube": state.cube.value }, svg);
    const text = el("text", { x: cx, y: cy + 9, class: "cubetext" }, svg);
    text.textContent = String(state.cube.value === 1 ? 64 : state.cube.value);
  }
  // The dice, on the right half of the board for the viewer, left for the opponent.
  if (state.dice) {
    // The side on roll's dice lie on its right: the viewer's on the right half.
    const centre = state.diceMine ? barX + BAR + 3 * POINT_W : leftEdge + 3 * POINT_W;
    const first = centre - 35 * (state.dice.length - 1);
    const group = el("g", { class: `dice${state.onDice ? " swappable" : ""}`, "data-mine": state.diceMine ? 1 : 0 }, svg);
    if (state.onDice) {
      // The gap between the dice is theirs too.
      el("rect", { x: first - 30, y: H / 2 - 30, width: 70 * (state.dice.length - 1) + 60, height: 60, class: "dicezone" }, group);
      group.setAttribute("role", "button");
      group.addEventListener("click", () => state.onDice());
    }
    state.dice.forEach((face, i) => drawDie(group, first + i * 70, H / 2, face, state.diceUsed && state.diceUsed[i]));
  }
  drawMarks(svg, state);
  drawSlides(svg, state);
}

// The last play: a faint ring where each checker left, a bright one on where it went.
function drawMarks(svg, state) {
  const count = (place) => {
    if (place === "bar") return state.board[25];
    if (place === "their-bar") return -state.board[0];
    if (place === "off") return state.off[0];
    if (place === "their-off") return state.off[1];
    return Math.abs(state.board[place]);
  };
  // A suggested play on the board before it (the analysis's better play): the
  // checkers to move ringed, the spots they go to drawn as ghosts.
  if (state.suggest) {
    const added = new Map();
    for (const place of state.suggest.from) {
      const k = (added.get(place) || 0) + 1;
      added.set(place, k);
      const spot = checkerSpot(place, Math.max(0, count(place) - k), state.homeRight);
      el("circle", { cx: spot.x, cy: spot.y, r: R + 2, class: "suggest-from", "data-place": place }, svg);
    }
    const arriving = new Map();
    for (const place of state.suggest.to) {
      if (place === "off" || place === "their-off") continue;
      const k = arriving.get(place) || 0;
      arriving.set(place, k + 1);
      const own = Math.max(0, state.board[place] ?? 0) > 0 || place === "bar" ? count(place) : 0;
      const spot = checkerSpot(place, own + k, state.homeRight);
      el("circle", { cx: spot.x, cy: spot.y, r: R - 4, class: "suggest-to", "data-place": place }, svg);
    }
  }
  if (!state.marks) return;
  for (const place of new Set(state.marks.from)) {
    const spot = checkerSpot(place, count(place), state.homeRight);
    el("circle", { cx: spot.x, cy: spot.y, r: R - 4, class: "ghost", "data-place": place }, svg);
  }
  for (const place of new Set(state.marks.to)) {
    if (place === "off" || place === "their-off") continue;
    const spot = checkerSpot(place, Math.max(0, count(place) - 1), state.homeRight);
    el("circle", { cx: spot.x, cy: spot.y, r: R + 2, class: "moved", "data-place": place }, svg);
  }
}

// Checkers on their way: each is drawn where it now stands (the board is the one
// after the move) and slides there from where it came.
function drawSlides(svg, state) {
  for (const slide of state.slides || []) {
    const node = topChecker(svg, slide.place);
    if (!node) continue;
    const box = node.getBBox();
    const dx = slide.from.x - (box.x + box.width / 2);
    const dy = slide.from.y - (box.y + box.height / 2);
    node.classList.add("sliding");
    node.style.transition = "none";
    node.style.transform = `translate(${dx}px, ${dy}px)`;
    node.getBoundingClientRect(); // the start is laid out before the transition
    node.style.transition = `transform ${slide.ms}ms ease-in-out`;
    node.style.transform = "translate(0px, 0px)";
  }
}

function topChecker(svg, place) {
  if (place === "off" || place === "their-off") {
    const all = svg.querySelectorAll(`.offchecker[data-place="${place}"]`);
    return all.length ? all[all.length - 1] : null;
  }
  const point = place === "bar" ? 25 : place === "their-bar" ? 0 : place;
  const all = svg.querySelectorAll(`.checker[data-point="${point}"]`);
  return all.length ? all[all.length - 1] : null;
}

function drawStack(svg, x, bottom, n, colour, point, state, startY = null) {
  const shown = Math.min(n, 5);
  for (let i = 0; i < shown; i++) {
    let cy;
    if (startY !== null) cy = bottom ? startY + i * 2 * R : startY - i * 2 * R;
    else cy = bottom ? H - FRAME - R - i * 2 * R : FRAME + R + i * 2 * R;
    const selected = state.selected === point && i === shown - 1;
    const c = el("circle", { cx: x, cy, r: R, class: `checker c${colour}${selected ? " selected" : ""}`, "data-point": point }, svg);
    c.addEventListener("click", () => state.onPoint && state.onPoint(point));
    c.addEventListener("pointerdown", (e) => state.onDrag && state.onDrag(point, e));
  }
  if (n > 5) {
    const cy = startY !== null ? (bottom ? startY + 4 * 2 * R : startY - 4 * 2 * R) : bottom ? H - FRAME - R - 4 * 2 * R : FRAME + R + 4 * 2 * R;
    const label = el("text", { x, y: cy + 7, class: `count c${colour}` }, svg);
    label.textContent = String(n);
  }
}

const PIPS = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]], 4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]], 6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] };

function drawDie(svg, cx, cy, face, used) {
  const g = el("g", { class: `die${used ? " used" : ""}`, "data-face": face }, svg);
  el("rect", { x: cx - 25, y: cy - 25, width: 50, height: 50, rx: 8 }, g);
  for (const [dx, dy] of PIPS[face]) el("circle", { cx: cx + dx * 13, cy: cy + dy * 13, r: 5 }, g);
}

// The point a screen position falls on (for drags).
export function pointAt(svg, clientX, clientY) {
  const hit = document.elementFromPoint(clientX, clientY);
  const p = hit && hit.getAttribute && hit.getAttribute("data-point");
  return p === null || p === undefined ? null : Number(p);
}

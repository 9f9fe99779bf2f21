// The offline book browser (obook export --html): plain script, no module (browsers refuse module
// scripts and fetch() on file://). OBOOK.book is the book and the kind's view, OBOOK.positions the
// positions by id, each stored once in the orientation of the first line that reached it; a book
// move's link names the position it leads to and the symmetry (numbered as obook.go.symmetry) from
// that position's stored orientation to the one the move reaches. The page keeps, for the line it
// shows, the map from the current position's stored points to the shown ones.
"use strict";
(function () {
  const book = OBOOK.book;
  const positions = OBOOK.positions;
  const size = book.size;
  const view = book.view;
  const COLUMNS = "ABCDEFGHJKLMNOPQRST";
  const SVG = "http://www.w3.org/2000/svg";
  const cells = size * size;

  // ---- points, vertices and symmetries --------------------------------------------------------------

  function transformXY(s, x, y) {  // obook.go.symmetry.transform_xy
    const n = size - 1;
    return [[x, y], [n - y, x], [n - x, n - y], [y, n - x], [n - x, y], [x, n - y], [y, x], [n - y, n - x]][s];
  }
  const SYMMETRIES = [];
  for (let s = 0; s < 8; s++) {
    const map = new Int16Array(cells);
    for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) {
      const [tx, ty] = transformXY(s, x, y);
      map[y * size + x] = ty * size + tx;
    }
    SYMMETRIES.push(map);
  }
  const IDENTITY = SYMMETRIES[0];

  // "E5" -> y * size + x (row 1 at y = 0); -1 for a pass; null for anything else
  function pointOf(vertex) {
    if (!vertex) return null;
    const v = vertex.trim().toUpperCase();
    if (v === "PASS") return -1;
    const x = COLUMNS.indexOf(v[0]);
    const row = parseInt(v.slice(1), 10);
    if (x < 0 || x >= size || !(row >= 1 && row <= size) || String(row) !== v.slice(1)) return null;
    return (row - 1) * size + x;
  }
  function vertexOf(point) {
    return point < 0 ? "pass" : COLUMNS[point % size] + String(Math.floor(point / size) + 1);
  }
  function shown(map, vertex) {  // a stored vertex in the line's orientation
    const point = pointOf(vertex);
    return point === null ? vertex : vertexOf(point < 0 ? point : map[point]);
  }

  // ---- the line: board and positions --------------------------------------------------------------------

  function neighbours(p) {
    const x = p % size, out = [];
    if (x > 0) out.push(p - 1);
    if (x < size - 1) out.push(p + 1);
    if (p >= size) out.push(p - size);
    if (p < cells - size) out.push(p + size);
    return out;
  }
  function chain(board, p) {  // the chain through p, and its liberties
    const color = board[p], seen = new Set([p]), todo = [p], liberties = new Set();
    while (todo.length) {
      for (const q of neighbours(todo.pop())) {
        if (board[q] === 0) liberties.add(q);
        else if (board[q] === color && !seen.has(q)) { seen.add(q); todo.push(q); }
      }
    }
    return { stones: seen, liberties };
  }
  // The board along a line of book moves (legal: no check), with captures and the ko point.
  class Game {
    constructor() { this.board = new Int8Array(cells); this.number = new Int16Array(cells); this.ko = -1; this.moves = 0; }
    play(p) {
      const color = this.moves % 2 === 0 ? 1 : 2;
      this.moves += 1;
      this.ko = -1;
      if (p < 0) return;
      this.board[p] = color;
      this.number[p] = this.moves;
      const captured = [];
      for (const q of neighbours(p)) {
        if (this.board[q] === 3 - color) {
          const group = chain(this.board, q);
          if (!group.liberties.size) for (const r of group.stones) { this.board[r] = 0; this.number[r] = 0; captured.push(r); }
        }
      }
      const own = chain(this.board, p);
      if (captured.length === 1 && own.stones.size === 1 && own.liberties.size === 1) this.ko = captured[0];
    }
    fixedBy(s) {  // symmetry s leaves the position as it is
      const map = SYMMETRIES[s];
      if (this.ko >= 0 && map[this.ko] !== this.ko) return false;
      for (let p = 0; p < cells; p++) if (this.board[map[p]] !== this.board[p]) return false;
      return true;
    }
    stones() {
      const out = [];
      for (let p = 0; p < cells; p++) {
        if (this.board[p]) out.push({ point: p, color: this.board[p] === 1 ? "B" : "W", move: this.number[p] });
      }
      return out;
    }
  }
  const INVERSE = [0, 3, 2, 1, 4, 5, 6, 7];

  // The path of a shown line through the book: the position it reaches, the map from that position's
  // stored points to the shown ones, the board, and how many of the line's moves are book moves. A move
  // the book stores as a symmetric image (C3 for G7 on the empty board) is found through the symmetries
  // that leave the shown position as it is.
  function walk(line) {
    let id = 0;
    let map = IDENTITY;
    const game = new Game();
    for (let i = 0; i < line.length; i++) {
      const position = positions[id];
      const point = pointOf(line[i]);
      if (!position || point === null) return { id, map, game, reached: i };
      let found = null;
      for (let s = 0; s < 8 && !found; s++) {
        if (s && (point < 0 || !game.fixedBy(s))) continue;
        const image = point < 0 ? "pass" : vertexOf(map.indexOf(SYMMETRIES[s][point]));
        const index = position.doc.candidates.findIndex((c) => c.move.toUpperCase() === image.toUpperCase());
        if (index >= 0 && position.next[index]) found = { link: position.next[index], s };
      }
      if (!found) return { id, map, game, reached: i };
      const [target, k] = found.link;
      const next = SYMMETRIES[k], back = SYMMETRIES[INVERSE[found.s]];
      const composed = new Int16Array(cells);
      for (let p = 0; p < cells; p++) composed[p] = back[map[next[p]]];
      id = target;
      map = composed;
      game.play(point);
    }
    return { id, map, game, reached: line.length };
  }

  function indexOf(map) {  // which of the 8 symmetries a point map is
    return SYMMETRIES.findIndex((sym) => sym.every((q, p) => q === map[p]));
  }
  // The map from the stored points of the position a walk reached to the points it shows them at. In a
  // symmetric position several maps fit; this one picks the orientation ``obook lookup`` answers in for
  // the shown line: of the symmetries taking the shown position to the canonical one, the smallest.
  function displayMap(position, map, game) {
    const inverse = new Int16Array(cells);
    for (let p = 0; p < cells; p++) inverse[map[p]] = p;
    const toCanonical = SYMMETRIES[position.symmetry];
    let best = 8;
    for (let h = 0; h < 8; h++) {
      if (!game.fixedBy(h)) continue;
      const composed = new Int16Array(cells);
      for (let p = 0; p < cells; p++) composed[p] = toCanonical[inverse[SYMMETRIES[h][p]]];
      best = Math.min(best, indexOf(composed));
    }
    const fromCanonical = SYMMETRIES[INVERSE[best]];
    const shownMap = new Int16Array(cells);
    for (let p = 0; p < cells; p++) shownMap[p] = fromCanonical[toCanonical[p]];
    return shownMap;
  }

  // ---- formats -------------------------------------------------------------------------------------------

  function format(value, how, map) {
    if (value === null || value === undefined) return "–";
    if (how === "pct") return `${(100 * value).toFixed(1)}%`;
    if (how === "score") return `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
    if (how === "vertex") return shown(map, value);
    return String(value);
  }
  function compact(n) {
    if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
    if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
    if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
    return String(n);
  }
  function el(name, attributes = {}, parent = null, svg = false) {
    const node = svg ? document.createElementNS(SVG, name) : document.createElement(name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }
  const s = (name, attributes, parent) => el(name, attributes, parent, true);

  // ---- drawing -------------------------------------------------------------------------------------------

  function starPoints() {
    if (size < 7) return [];
    const edge = size >= 13 ? 3 : 2, far = size - 1 - edge, points = [[edge, edge], [edge, far], [far, edge], [far, far]];
    if (size % 2 === 1) {
      const mid = (size - 1) / 2;
      points.push([mid, mid]);
      if (size >= 15) points.push([mid, edge], [mid, far], [edge, mid], [far, mid]);
    }
    return points;
  }
  const at = (p) => [p % size, size - 1 - Math.floor(p / size)];  // SVG units, row 1 at the bottom

  function drawBoard(stones, last, marks, go) {
    const m = 1;
    const svg = s("svg", { class: "board", viewBox: `${-m} ${-m} ${size - 1 + 2 * m} ${size - 1 + 2 * m}`, role: "img",
                           "aria-label": "board" });
    s("rect", { x: -m, y: -m, width: size - 1 + 2 * m, height: size - 1 + 2 * m, fill: "#dcb35c" }, svg);
    const grid = s("g", { class: "grid" }, svg);
    for (let i = 0; i < size; i++) {
      s("line", { x1: 0, y1: i, x2: size - 1, y2: i }, grid);
      s("line", { x1: i, y1: 0, x2: i, y2: size - 1 }, grid);
    }
    for (const [x, y] of starPoints()) s("circle", { cx: x, cy: y, r: 0.09, fill: "#3b2f1a" }, svg);
    for (let i = 0; i < size; i++) {
      for (const [x, y, text] of [[i, -0.65, COLUMNS[i]], [i, size - 0.35, COLUMNS[i]],
                                  [-0.65, i, String(size - i)], [size - 0.35, i, String(size - i)]]) {
        s("text", { class: "coord", x, y }, svg).textContent = text;
      }
    }
    for (const stone of stones) {
      const [x, y] = at(stone.point);
      s("circle", { class: `stone ${stone.color}`, cx: x, cy: y, r: 0.47, "data-vertex": vertexOf(stone.point) }, svg);
      s("text", { class: `number ${stone.color}`, x, y }, svg).textContent = String(stone.move);
    }
    if (last !== null && last >= 0) {
      const [x, y] = at(last);
      s("circle", { class: "last", cx: x, cy: y, r: 0.5 }, svg);
    }
    for (const mark of marks) {
      const p = pointOf(mark.move);
      if (p === null || p < 0) continue;
      const [x, y] = at(p);
      const g = s("g", { class: `candidate${mark.usage ? " usage" : ""}${mark.follow ? "" : " dead"}`,
                         "data-move": mark.move, tabindex: 0 }, svg);
      const hue = Math.round(120 * Math.max(0, Math.min(1, mark.rate)));
      s("circle", { cx: x, cy: y, r: 0.46, fill: `hsl(${hue}, 70%, 62%)` }, g);
      s("text", { class: "rate", x, y: y - 0.13 }, g).textContent = `${Math.round(100 * mark.rate)}`;
      s("text", { x, y: y + 0.2 }, g).textContent = compact(mark.count);
      s("title", {}, g).textContent = mark.title;
      if (mark.follow) {
        g.addEventListener("click", () => go(mark.move));
        g.addEventListener("keydown", (event) => { if (event.key === "Enter") go(mark.move); });
      }
    }
    return svg;
  }

  // ---- the page -------------------------------------------------------------------------------------------

  let line = [];

  function readHash() {
    const text = decodeURIComponent(location.hash.replace(/^#/, ""));
    return text ? text.split(/[\s,;]+/).filter(Boolean) : [];
  }
  function setLine(next) {
    const hash = next.length ? "#" + next.join(",") : "#";
    if (location.hash !== hash && !(hash === "#" && location.hash === "")) location.hash = hash;
    else render(next);
  }

  function render(requested) {
    const { id, map: walked, game, reached } = walk(requested);
    line = requested.slice(0, reached);
    const position = positions[id];
    const map = displayMap(position, walked, game);
    const doc = position.doc;
    const notice = document.getElementById("notice");
    notice.hidden = reached === requested.length;
    if (!notice.hidden) {
      notice.textContent = `${requested[reached]} (move ${reached + 1}) is not a book move here: ` +
        `showing the line up to move ${reached}.`;
    }
    document.body.dataset.position = position.key;
    document.body.dataset.line = line.join(",");

    // the line
    const lineBox = document.getElementById("line");
    lineBox.replaceChildren();
    const jump = (n) => { const b = el("button", { type: "button", "data-ply": n }, lineBox); b.addEventListener("click", () => setLine(line.slice(0, n))); return b; };
    jump(0).textContent = "start";
    line.forEach((vertex, i) => { jump(i + 1).textContent = `${i + 1}. ${vertex}`; });
    lineBox.lastChild.classList.add("current");
    document.getElementById("back").disabled = line.length === 0;
    const mover = doc.to_move === "B" ? "Black" : "White";
    document.getElementById("to-move").textContent = `${mover} to play, move ${doc.move_number}`;
    document.getElementById("key").textContent = `key ${position.key}`;

    // the figures
    const figures = document.getElementById("figures");
    figures.replaceChildren();
    el("dt", {}, figures).textContent = "in the book";
    el("dd", { "data-field": "in_book" }, figures).textContent = doc.in_book ? "yes" : "no (a leaf: the book ends here)";
    for (const [field, label, how] of view.figures) {
      if (!(field in doc)) continue;
      el("dt", {}, figures).textContent = label;
      el("dd", { "data-field": field }, figures).textContent = format(doc[field], how, map);
    }

    // the book moves
    const table = document.getElementById("moves");
    const head = table.tHead, body = table.tBodies[0];
    head.replaceChildren();
    body.replaceChildren();
    const titles = el("tr", {}, head);
    for (const [, label, how] of view.columns) el("th", how === "vertex" ? {} : { class: "num" }, titles).textContent = label;
    el("th", {}, titles).textContent = "";
    const marks = [];
    const [rateField, countField] = view.label;
    doc.candidates.forEach((c, index) => {
      const move = shown(map, c.move);
      const follow = position.next[index] !== null;
      const row = el("tr", { "data-move": move, class: `${follow ? "follow" : ""}${c.usage ? " usage" : ""}` }, body);
      for (const [field, , how] of view.columns) {
        el("td", { "data-field": field, class: how === "vertex" ? "" : "num" }, row).textContent = format(c[field], how, map);
      }
      const notes = view.marks.filter(([field]) => c[field]).map(([, label]) => label);
      if (!follow) notes.push("not followed");
      el("td", { class: "marks" }, row).textContent = notes.join(", ");
      if (follow) row.addEventListener("click", () => setLine([...line, move]));
      const title = view.columns.slice(1).map(([field, label, how]) => `${label} ${format(c[field], how, map)}`).join(", ");
      marks.push({ move, rate: c[rateField] ?? 0, count: c[countField] ?? 0, usage: c.usage, follow, title: `${move}: ${title}` });
      row.addEventListener("mouseenter", () => document.querySelector(`g.candidate[data-move="${move}"]`)?.classList.add("hover"));
      row.addEventListener("mouseleave", () => document.querySelector(`g.candidate[data-move="${move}"]`)?.classList.remove("hover"));
    });
    if (!doc.candidates.length) {
      el("td", { colspan: view.columns.length + 1, class: "muted" }, el("tr", {}, body)).textContent =
        "no book move: the book ends here";
    }
    const last = line.length ? pointOf(line[line.length - 1]) : null;
    document.getElementById("board").replaceChildren(
      drawBoard(game.stones(), last, marks, (move) => setLine([...line, move])));
  }

  const labelOf = (field) => (view.columns.find(([name]) => name === field) || [field, field])[1];
  document.getElementById("title").textContent = `obook book ${book.book}`;
  document.getElementById("about").textContent =
    `${size}x${size}, komi ${book.komi}, ${book.rule} (${book.kind}); ${book.positions} positions, ` +
    `${book.book_moves} book moves${book.truncated ? " (the export stopped at its limit)" : ""}. Engine: ${book.engine}`;
  document.getElementById("legend").textContent =
    `A book move's mark shows its ${labelOf(view.label[0])} in percent for the player to move and its ` +
    `${labelOf(view.label[1])}; ` +
    "click a mark or a row to play it. The link (#moves) opens this position.";
  document.getElementById("back").addEventListener("click", () => setLine(line.slice(0, -1)));
  document.getElementById("start").addEventListener("click", () => setLine([]));
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT") return;
    if (event.key === "Backspace" || event.key === "ArrowLeft") { event.preventDefault(); setLine(line.slice(0, -1)); }
    if (event.key === "Home") setLine([]);
  });
  window.addEventListener("hashchange", () => render(readHash()));
  render(readHash());
  document.body.dataset.ready = "1";
})();

// Go boards as SVG, drawn from the API's stone lists. One unit is one line spacing; the board
// spans -1..size in both directions so that coordinates fit around the grid.
const SVG = "http://www.w3.org/2000/svg";
export const COLUMNS = "ABCDEFGHJKLMNOPQRST";

export function el(name, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// "E5" -> [x, y] in SVG units (row 1 at the bottom), or null for pass.
export function place(vertex, size) {
  if (!vertex || vertex.toLowerCase() === "pass") return null;
  const col = COLUMNS.indexOf(vertex[0].toUpperCase());
  const row = parseInt(vertex.slice(1), 10);
  return [col, size - row];
}

function starPoints(size) {
  if (size < 7) return [];
  const edge = size >= 13 ? 3 : 2;
  const far = size - 1 - edge;
  const points = [[edge, edge], [edge, far], [far, edge], [far, far]];
  if (size % 2 === 1) {
    const mid = (size - 1) / 2;
    points.push([mid, mid]);
    if (size >= 15) points.push([mid, edge], [mid, far], [edge, mid], [far, mid]);
  }
  return points;
}

// options: stones [{vertex, color, move}], numbers (draw move numbers), last (vertex of the last
// move), candidates [{move, winrate, games, usage}, or with count (its lower label), title and
// outside (a move not in the book) in place of games], onPick(vertex), coordinates.
export function drawBoard(size, options = {}) {
  const { stones = [], numbers = true, last = null, candidates = [], onPick = null, coordinates = true } = options;
  const margin = coordinates ? 1 : 0.6;
  const svg = el("svg", {
    class: "board", role: "img", viewBox: `${-margin} ${-margin} ${size - 1 + 2 * margin} ${size - 1 + 2 * margin}`,
    "data-size": size, "data-stones": stones.length,
  });
  el("rect", { x: -margin, y: -margin, width: size - 1 + 2 * margin, height: size - 1 + 2 * margin, fill: "#dcb35c" }, svg);
  const grid = el("g", { class: "grid" }, svg);
  for (let i = 0; i < size; i++) {
    el("line", { x1: 0, y1: i, x2: size - 1, y2: i }, grid);
    el("line", { x1: i, y1: 0, x2: i, y2: size - 1 }, grid);
  }
  for (const [x, y] of starPoints(size)) el("circle", { cx: x, cy: y, r: 0.09, fill: "#3b2f1a" }, svg);
  if (coordinates) {
    for (let i = 0; i < size; i++) {
      for (const [x, y, text] of [[i, -0.7, COLUMNS[i]], [i, size - 0.3, COLUMNS[i]],
                                  [-0.7, i, String(size - i)], [size - 0.3, i, String(size - i)]]) {
        el("text", { class: "coord", x, y }, svg).textContent = text;
      }
    }
  }
  for (const stone of stones) {
    const at = place(stone.vertex, size);
    if (!at) continue;
    el("circle", { class: `stone ${stone.color}`, cx: at[0], cy: at[1], r: 0.47, "data-vertex": stone.vertex }, svg);
    if (numbers && stone.move > 0) {
      el("text", { class: `number ${stone.color}`, x: at[0], y: at[1] }, svg).textContent = String(stone.move);
    }
  }
  const lastAt = place(last, size);
  if (lastAt && !numbers) el("circle", { class: "last", cx: lastAt[0], cy: lastAt[1], r: 0.22 }, svg);
  if (lastAt && numbers) el("circle", { class: "last", cx: lastAt[0], cy: lastAt[1], r: 0.5 }, svg);
  for (const c of candidates) {
    const at = place(c.move, size);
    if (!at) continue;
    const kind = `candidate${c.usage ? " usage" : ""}${c.outside ? " outside" : ""}`;
    const group = el("g", { class: kind, "data-move": c.move, tabindex: 0 }, svg);
    const hue = Math.round(120 * c.winrate);  // red (0%) to green (100%)
    el("circle", { cx: at[0], cy: at[1], r: 0.46, fill: `hsl(${hue}, 70%, 62%)` }, group);
    el("text", { class: "rate", x: at[0], y: at[1] - 0.14 }, group).textContent = `${Math.round(100 * c.winrate)}%`;
    el("text", { x: at[0], y: at[1] + 0.2 }, group).textContent = c.count ?? compact(c.games);
    el("title", {}, group).textContent =
      c.title ?? `${c.move}: ${c.games} games, ${c.wins} wins (${(100 * c.winrate).toFixed(1)}%)`;
    if (onPick) {
      group.addEventListener("click", () => onPick(c.move));
      group.addEventListener("keydown", (event) => { if (event.key === "Enter") onPick(c.move); });
    }
  }
  return svg;
}

export function compact(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

// The dashboard: polls /v1/progress for what is being played now, and /v1/books/{book}/lookup for
// the book explorer. Everything is drawn client-side from the JSON; text goes in via textContent.
import { drawBoard, compact } from "./board.js";
import { barChart, lineChart, clock } from "./charts.js";

const PROGRESS_EVERY_MS = 1500;
const BOOK_EVERY_MS = 5000;
const $ = (id) => document.getElementById(id);

const state = { book: null, path: [], books: [], lookupTimer: null };

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  state.book = params.get("book") || null;
  state.path = (params.get("moves") || "").split(",").filter(Boolean);
}

function writeHash() {
  const params = new URLSearchParams();
  if (state.book) params.set("book", state.book);
  if (state.path.length) params.set("moves", state.path.join(","));
  history.replaceState(null, "", `#${params}`);
}

async function getJSON(url) {
  const answer = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(typeof body.detail === "string" ? body.detail : `${answer.status} ${answer.statusText}`);
  return body;
}

function node(tag, text = "", attributes = {}) {
  const n = document.createElement(tag);
  if (text !== "") n.textContent = text;
  for (const [k, v] of Object.entries(attributes)) n.setAttribute(k, v);
  return n;
}

function row(table, cells, header = false) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = node(header ? "th" : "td", cell.text ?? cell);
    if (cell.num) td.className = "num";
    tr.appendChild(td);
  }
  table.appendChild(tr);
  return tr;
}

// ---- progress ---------------------------------------------------------------------------------

function renderTotals(totals) {
  const box = $("totals");
  box.replaceChildren();
  for (const [label, value] of [["books", totals.books], ["games finished", totals.games_finished],
                                ["in progress", totals.games_in_progress], ["games in the last hour", totals.games_last_hour],
                                ...(totals.expansions_done ? [["expansions done", totals.expansions_done]] : []),
                                ["live workers", totals.live_workers]]) {
    const div = node("div", label);
    div.prepend(node("b", compact(value)));
    box.appendChild(div);
  }
}

function renderBookSelect(books) {
  const select = $("book-select");
  const names = books.map((b) => b.name);
  if (names.length && !names.includes(state.book)) {
    const busiest = [...books].sort((a, b) => b.in_flight_total - a.in_flight_total || b.units_done - a.units_done)[0];
    state.book = busiest.name;
    state.path = [];
    writeHash();
    refreshBook();
  }
  if ([...select.options].map((o) => o.value).join("\n") !== names.join("\n")) {
    select.replaceChildren(...names.map((n) => node("option", n, { value: n })));
  }
  select.value = state.book || "";
}

function renderLive(book) {
  const box = $("live-boards");
  const games = book ? book.in_flight : [];
  const aside = (book && book.games_set_aside ? `, ${book.games_set_aside} set aside after repeated failures` : "")
    + (book && book.games_at_move_cap ? `, ${book.games_at_move_cap} ended at the move cap` : "");
  const unit = book ? book.unit : "game";
  const done = book && unit !== "game" ? `; ${book.units_done} done` : "";
  $("live-title").textContent = unit === "game" ? "Being explored now" : "Positions being searched now";
  $("live-count").textContent = book ? `(${book.in_flight_total} ${unit}${book.in_flight_total === 1 ? "" : "s"}${done}${aside})` : "";
  $("live-count").title = book && book.set_aside ? book.set_aside.map((g) => `${unit} ${g.id}: ${g.reason}`).join("\n") : "";
  if (!games.length) {
    box.replaceChildren(node("p", `no ${unit} is being ${unit === "game" ? "played" : "searched"}`, { class: "muted" }));
    return;
  }
  const cards = games.map((g) => {
    const card = node("div", "", { class: "card", "data-game": g.id });
    const who = g.lease_owner ? g.lease_owner.split(":").slice(-2, -1)[0] || g.lease_owner : "";
    card.appendChild(node("div", `${unit} ${g.id} · ${g.n_moves} moves · ${g.to_move} to play${who ? " · " + who : ""}`,
                          { class: "caption" }));
    const svg = drawBoard(book.size, { stones: g.stones, numbers: true, last: g.moves[g.moves.length - 1] });
    svg.setAttribute("data-game", g.id);
    svg.setAttribute("data-moves", g.n_moves);
    card.appendChild(svg);
    card.appendChild(node("div", g.moves.join(" ") || "(empty board)", { class: "sequence" }));
    return card;
  });
  box.replaceChildren(...cards);
}

function renderCharts(book) {
  if (!book) return;
  const units = `${book.unit}s`;
  $("rate-title").textContent = `${book.unit === "game" ? "Games" : "Expansions"} per hour`;
  $("rate-now").textContent = `(${book.units_last_hour} in the last hour)`;
  $("rate-chart").replaceChildren(barChart(book.unit_rate.map((p) => ({
    label: clock(p.end), value: p.per_hour, title: `${clock(p.start)}–${clock(p.end)}: ${p.units} ${units} (${p.per_hour.toFixed(0)}/h)`,
  }))));
  $("growth-now").textContent = book.unit === "game" ? `(${book.games_finished} finished)` : `(${book.units_done} ${units} done)`;
  $("growth-chart").replaceChildren(lineChart(book.unit_growth.map((p) => ({ at: p.at, value: p.done }))));
}

// The chosen book's header: its kind, its units by state, its rate, and its SGF export.
function renderBookFacts(book) {
  const box = $("book-facts");
  if (!book) {
    box.replaceChildren();
    return;
  }
  const search = book.kind === "search-valued";
  $("book-title").textContent = `Book ${book.name}`;
  $("book-kind").textContent = search
    ? `(${book.size}×${book.size}, ${book.algorithm}: search values backed up over its positions; grows by expansions)`
    : `(${book.size}×${book.size}, ${book.algorithm}: statistics of its self-play games)`;
  const link = $("book-export");
  link.href = book.export_url;
  link.hidden = !book.export_url;
  const units = `${book.unit}s`;
  const facts = [[search ? "expansions done" : "games finished", book.units_done],
                 [search ? "open (scheduled)" : "in progress", book.units_open],
                 ["being " + (search ? "searched" : "played"), book.in_flight_total],
                 ["set aside", book.units_set_aside],
                 [`${units} in the last hour`, book.units_last_hour]];
  box.replaceChildren(...facts.map(([label, value]) => {
    const div = node("div", label, { "data-fact": label });
    div.prepend(node("b", compact(value)));
    return div;
  }));
}

function renderWorkers(workers) {
  const table = $("workers");
  table.replaceChildren();
  row(table, ["worker", "kind", "book", "game / expansion", "moves", "last seen", "sequence being played"], true);
  if (!workers.length) {
    row(table, ["no live workers", "", "", "", "", "", ""]);
    return;
  }
  for (const w of workers) {
    const seen = Math.max(0, Math.round((Date.now() - Date.parse(w.last_seen)) / 1000));
    row(table, [w.id, w.kind, w.book ?? "", w.game_id ?? "", { text: w.moves.length, num: true }, `${seen} s ago`,
                w.moves.join(" ")]);
  }
}

async function pollProgress() {
  try {
    const progress = await getJSON("/v1/progress?games_limit=8&limit=50");
    state.books = progress.books;
    renderTotals(progress.totals);
    renderBookSelect(progress.books);
    const book = progress.books.find((b) => b.name === state.book);
    renderBookFacts(book);
    renderLive(book);
    renderCharts(book);
    renderWorkers(progress.workers);
    $("status").textContent = `updated ${new Date(progress.generated_at).toLocaleTimeString()}`;
  } catch (error) {
    $("status").textContent = `cannot reach the service: ${error.message}`;
  } finally {
    setTimeout(pollProgress, PROGRESS_EVERY_MS);
  }
}

// ---- the book explorer ------------------------------------------------------------------------

function renderPath() {
  const nav = $("book-path");
  nav.replaceChildren();
  const root = node("button", "root", { type: "button" });
  root.addEventListener("click", () => goTo([]));
  nav.appendChild(root);
  state.path.forEach((move, i) => {
    const b = node("button", `${i + 1}. ${move}`, { type: "button" });
    b.addEventListener("click", () => goTo(state.path.slice(0, i + 1)));
    nav.appendChild(b);
  });
}

function goTo(path) {
  state.path = path;
  writeHash();
  refreshBook();
}

const percent = (x) => (x == null ? "–" : `${(100 * x).toFixed(1)}%`);
const signed = (x) => (x == null ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(1)}`);
const player = (color) => (color === "B" ? "Black" : "White");

function drawPosition(found, candidates) {
  $("book-board").replaceChildren(drawBoard(found.size, {
    stones: found.stones, numbers: true, last: found.moves[found.moves.length - 1],
    candidates, onPick: (move) => goTo([...state.path, move]),
  }));
}

function candidateRow(table, cells, move, marks, kind) {
  const tr = row(table, [...cells, marks]);
  tr.dataset.move = move;
  tr.dataset.kind = kind;
  if (move !== "pass") {
    tr.className = "clickable";
    tr.addEventListener("click", () => goTo([...state.path, move]));
  }
  return tr;
}

// A statistical book's position: the games through each move.
function renderStatistics(found) {
  drawPosition(found, found.candidates);
  $("book-summary").textContent = found.in_book
    ? `${player(found.to_move)} to play · ${found.games} games here · usage rule: ` +
      `${found.usage_move ?? "none"} · self-play: ${found.coevolution_move ?? "would mutate"}`
    : "out of book: no game of the population went through this position";
  $("book-note").textContent = "";
  const table = $("book-candidates");
  table.replaceChildren();
  row(table, ["move", "games", "wins", "win rate", "share of wins", ""], true);
  for (const c of found.candidates) {
    const marks = [c.usage ? "usage rule" : "", c.coevolution ? "self-play (coevolution)" : ""].filter(Boolean).join(", ");
    candidateRow(table, [c.move, { text: c.games, num: true }, { text: c.wins, num: true },
                         { text: percent(c.winrate), num: true }, { text: percent(c.share), num: true }],
                 c.move, marks, "book");
  }
}

// A minimax book's position: each book move's backed-up value with its bounds, and the best move
// outside the book (the position's own deep search), which the book plays when it is clearly better.
function renderMinimax(found) {
  const known = found.value != null;
  const marks = found.candidates.map((c) => ({
    move: c.move, winrate: c.value, usage: c.usage, count: compact(c.visits),
    title: `${c.move}: value ${percent(c.value)} [${percent(c.lcb)}, ${percent(c.ucb)}], ${c.visits} visits, prior ${percent(c.prior)}`,
  }));
  if (found.own_move && found.own_move !== "pass") {
    marks.push({ move: found.own_move, winrate: found.own_value, outside: true, count: compact(found.own_visits),
                 title: `${found.own_move} (outside the book): ${percent(found.own_value)} ` +
                        `[${percent(found.own_lcb)}, ${percent(found.own_ucb)}], ${found.own_visits} visits` });
  }
  drawPosition(found, marks);
  const plays = found.usage_move ?? (found.own_move ? `${found.own_move} (leaves the book)` : "none");
  $("book-summary").textContent = known
    ? `${player(found.to_move)} to play · value ${percent(found.value)} [${percent(found.lcb)}, ${percent(found.ucb)}]` +
      ` · the book plays ${plays} · score ${found.backed_up_result ?? "–"} · mean score ${signed(found.score_mean)}` +
      ` · own search ${found.playouts} playouts${found.in_book ? "" : " · a leaf: no book move yet"}`
    : "out of book: no expansion reached this position";
  $("book-note").textContent = known
    ? "value: minimax win rate for the player making the move, with its 95% bounds; visits: of the search behind " +
      "it; prior: its share of the position's search; score: backed up with the value, along its line (B+3.5: " +
      "Black leads by 3.5); mean score: of the search of the position it reaches, area score less komi for that player."
    : "";
  const table = $("book-candidates");
  table.replaceChildren();
  if (!known) return;
  row(table, ["move", "value", "lower", "upper", "visits", "prior", "score", "mean score", ""], true);
  for (const c of found.candidates) {
    candidateRow(table, [c.move, { text: percent(c.value), num: true }, { text: percent(c.lcb), num: true },
                         { text: percent(c.ucb), num: true }, { text: c.visits, num: true },
                         { text: percent(c.prior), num: true }, { text: c.backed_up_result ?? "–", num: true },
                         { text: signed(c.score_mean), num: true }],
                 c.move, c.usage ? "the book plays it" : "", "book");
  }
  if (found.own_move) {
    const tr = candidateRow(table, [found.own_move, { text: percent(found.own_value), num: true },
                                    { text: percent(found.own_lcb), num: true }, { text: percent(found.own_ucb), num: true },
                                    { text: found.own_visits, num: true }, "", "", ""],
                            found.own_move, `best outside the book${found.usage_move ? "" : " (the book plays it)"}`,
                            "outside");
    tr.classList.add("outside");
  }
}

async function refreshBook() {
  clearTimeout(state.lookupTimer);
  renderPath();
  if (!state.book) return;
  try {
    const found = await getJSON(`/v1/books/${encodeURIComponent(state.book)}/lookup?moves=${encodeURIComponent(state.path.join(","))}`);
    if (found.kind === "search-valued") renderMinimax(found);
    else renderStatistics(found);
  } catch (error) {
    $("book-summary").textContent = error.message;
  }
  state.lookupTimer = setTimeout(refreshBook, BOOK_EVERY_MS);
}

$("book-select").addEventListener("change", (event) => {
  state.book = event.target.value;
  goTo([]);
});
window.addEventListener("hashchange", () => { readHash(); refreshBook(); });

readHash();
pollProgress();
refreshBook();

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
    const busiest = [...books].sort((a, b) => b.in_flight_total - a.in_flight_total || b.games_finished - a.games_finished)[0];
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
  const unit = book && book.algorithm === "minimax" ? "expansion" : "game";
  const done = book && book.expansions_done != null ? `; ${book.expansions_done} done` : "";
  $("live-count").textContent = book ? `(${book.in_flight_total} ${unit}${book.in_flight_total === 1 ? "" : "s"}${done}${aside})` : "";
  $("live-count").title = book && book.set_aside ? book.set_aside.map((g) => `game ${g.id}: ${g.reason}`).join("\n") : "";
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
  $("rate-now").textContent = `(${book.games_last_hour} in the last hour)`;
  $("rate-chart").replaceChildren(barChart(book.rate.map((p) => ({
    label: clock(p.end), value: p.per_hour, title: `${clock(p.start)}–${clock(p.end)}: ${p.games} games (${p.per_hour.toFixed(0)}/h)`,
  }))));
  $("growth-now").textContent = `(${book.games_finished} finished)`;
  $("growth-chart").replaceChildren(lineChart(book.growth.map((p) => ({ at: p.at, value: p.finished }))));
}

function renderWorkers(workers) {
  const table = $("workers");
  table.replaceChildren();
  row(table, ["worker", "kind", "book", "game", "moves", "last seen", "sequence being played"], true);
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

async function refreshBook() {
  clearTimeout(state.lookupTimer);
  renderPath();
  if (!state.book) return;
  try {
    const found = await getJSON(`/v1/books/${encodeURIComponent(state.book)}/lookup?moves=${encodeURIComponent(state.path.join(","))}`);
    $("book-board").replaceChildren(drawBoard(found.size, {
      stones: found.stones, numbers: true, last: found.moves[found.moves.length - 1],
      candidates: found.candidates, onPick: (move) => goTo([...state.path, move]),
    }));
    $("book-summary").textContent = found.in_book
      ? `${found.to_move === "B" ? "Black" : "White"} to play · ${found.games} games here · usage rule: ` +
        `${found.usage_move ?? "none"} · self-play: ${found.coevolution_move ?? "would mutate"}`
      : "out of book: no game of the population went through this position";
    const table = $("book-candidates");
    table.replaceChildren();
    row(table, ["move", "games", "wins", "win rate", "share of wins", ""], true);
    for (const c of found.candidates) {
      const marks = [c.usage ? "usage rule" : "", c.coevolution ? "self-play (coevolution)" : ""].filter(Boolean).join(", ");
      const tr = row(table, [c.move, { text: c.games, num: true }, { text: c.wins, num: true },
                             { text: `${(100 * c.winrate).toFixed(1)}%`, num: true },
                             { text: `${(100 * c.share).toFixed(1)}%`, num: true }, marks]);
      if (c.move !== "pass") {
        tr.className = "clickable";
        tr.addEventListener("click", () => goTo([...state.path, c.move]));
      }
    }
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

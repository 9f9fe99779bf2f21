// Two small SVG charts: bars (games per hour in slices of the last hour) and a line (book growth).
import { el } from "./board.js";

const W = 560, H = 140, PAD = { left: 40, right: 10, top: 10, bottom: 22 };

function frame(maxValue) {
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none" });
  const top = maxValue > 0 ? maxValue : 1;
  for (const fraction of [0, 0.5, 1]) {
    const y = PAD.top + (1 - fraction) * (H - PAD.top - PAD.bottom);
    el("line", { x1: PAD.left, x2: W - PAD.right, y1: y, y2: y, stroke: "#e3e6ea" }, svg);
    el("text", { class: "axis", x: PAD.left - 4, y: y + 3, "text-anchor": "end" }, svg).textContent =
      formatNumber(top * fraction);
  }
  return { svg, top };
}

function formatNumber(v) {
  return v >= 100 ? String(Math.round(v)) : v >= 10 ? v.toFixed(0) : v.toFixed(1).replace(/\.0$/, "");
}

function clock(iso) {
  return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// points: [{label, value, title}]
export function barChart(points) {
  const { svg, top } = frame(Math.max(0, ...points.map((p) => p.value)));
  const span = (W - PAD.left - PAD.right) / Math.max(points.length, 1);
  points.forEach((p, i) => {
    const h = (p.value / top) * (H - PAD.top - PAD.bottom);
    const bar = el("rect", { class: "bar", x: PAD.left + i * span + 2, width: Math.max(span - 4, 1),
                             y: H - PAD.bottom - h, height: h }, svg);
    el("title", {}, bar).textContent = p.title;
    if (i % 3 === 0 || i === points.length - 1) {
      el("text", { class: "axis", x: PAD.left + (i + 0.5) * span, y: H - 6, "text-anchor": "middle" }, svg)
        .textContent = p.label;
    }
  });
  return svg;
}

// points: [{at (ISO time), value}]
export function lineChart(points) {
  const { svg, top } = frame(Math.max(0, ...points.map((p) => p.value)));
  if (!points.length) return svg;
  const t0 = Date.parse(points[0].at), t1 = Date.parse(points[points.length - 1].at);
  const x = (t) => PAD.left + (t1 > t0 ? (t - t0) / (t1 - t0) : 1) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(Date.parse(p.at)).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  el("path", { class: "line", d }, svg);
  for (const [i, anchor] of [[0, "start"], [points.length - 1, "end"]]) {
    el("text", { class: "axis", x: x(Date.parse(points[i].at)), y: H - 6, "text-anchor": anchor }, svg)
      .textContent = clock(points[i].at);
  }
  return svg;
}

export { clock };

// The Ranks timeline's input: zoom and pan by wheel, drag and keys, hover details, click to open
// a slice's compile. The view is kept inside the trace: at most the whole time range, at least
// 10 µs; lanes between one screenful of MAX-height lanes and every rank.

import { setTestHook } from '/lib/tlscope.js';
import { AXIS, GUTTER, formatUs } from './ranks-timeline.js';

/** @typedef {import('./ranks-timeline.js').RankTimeline} RankTimeline */

const MIN_TIME = 10;
const MAX_LANE_PX = 24;

/**
 * The view brought back inside the trace.
 * @param {RankTimeline} tl
 */
function clamp(tl) {
  const v = tl.view;
  const n = Math.max(1, tl.ranks.length);
  const { h } = tl.plot();
  const width = Math.min(tl.length * 1.02, Math.max(MIN_TIME, v.t1 - v.t0));
  const t0 = Math.min(Math.max(v.t0, -tl.length * 0.01), tl.length * 1.01 - width);
  v.t0 = t0;
  v.t1 = t0 + width;
  v.span = Math.min(n, Math.max(Math.min(n, h / MAX_LANE_PX), v.span));
  v.y0 = Math.min(Math.max(0, v.y0), n - v.span);
}

/**
 * Zoom by `ft` in time and `fy` in lanes (< 1: in) around plot fractions (ax, ay).
 * @param {RankTimeline} tl
 * @param {{ ax: number, ay: number, ft: number, fy: number }} how
 */
export function zoom(tl, { ax, ay, ft, fy }) {
  const v = tl.view;
  const t = v.t0 + ax * (v.t1 - v.t0);
  const width = (v.t1 - v.t0) * ft;
  v.t0 = t - ax * width;
  v.t1 = v.t0 + width;
  const y = v.y0 + ay * v.span;
  v.span *= fy;
  clamp(tl);
  v.y0 = y - ay * v.span;
  clamp(tl);
  tl.request();
}

/**
 * Pan by fractions of the plot.
 * @param {RankTimeline} tl
 * @param {number} fx
 * @param {number} fy
 */
export function pan(tl, fx, fy) {
  const v = tl.view;
  const dt = fx * (v.t1 - v.t0);
  v.t0 += dt;
  v.t1 += dt;
  v.y0 += fy * v.span;
  clamp(tl);
  tl.request();
}

/**
 * Canvas point of a mouse event, and its fractions of the plot.
 * @param {RankTimeline} tl
 * @param {MouseEvent} e
 */
function pointOf(tl, e) {
  const box = tl.canvas.getBoundingClientRect();
  const x = e.clientX - box.left;
  const y = e.clientY - box.top;
  const { w, h } = tl.plot();
  return { x, y, ax: Math.min(1, Math.max(0, (x - GUTTER) / w)), ay: Math.min(1, Math.max(0, (y - AXIS) / h)) };
}

/**
 * @param {RankTimeline} tl
 * @param {WheelEvent} e
 */
function onWheel(tl, e) {
  e.preventDefault();
  const { w } = tl.plot();
  const at = pointOf(tl, e);
  if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan(tl, e.deltaX / w, 0);
  else {
    const f = Math.exp(Math.max(-300, Math.min(300, e.deltaY)) * 0.002);
    zoom(tl, { ax: at.ax, ay: at.ay, ft: e.shiftKey ? 1 : f, fy: e.altKey ? 1 : f });
  }
  // The slice under the pointer is another one now: the hover box named the one before the zoom.
  if (!tl.options.tip.hidden) showTip(tl, tl.pick(at.x, at.y), at);
}

/** @type {Record<string, [number, number, number, number]>} key -> [time zoom, lane zoom, pan x, pan y] */
const KEYS = {
  w: [0.8, 0.8, 0, 0], '+': [0.8, 0.8, 0, 0], '=': [0.8, 0.8, 0, 0], s: [1.25, 1.25, 0, 0], '-': [1.25, 1.25, 0, 0],
  a: [1, 1, -0.15, 0], ArrowLeft: [1, 1, -0.15, 0], d: [1, 1, 0.15, 0], ArrowRight: [1, 1, 0.15, 0],
  ArrowUp: [1, 1, 0, -0.15], ArrowDown: [1, 1, 0, 0.15],
};

/**
 * @param {RankTimeline} tl
 * @param {KeyboardEvent} e
 */
function onKey(tl, e) {
  if (e.key === '0') {
    Object.assign(tl.view, { t0: 0, t1: tl.length, y0: 0, span: tl.ranks.length });
    clamp(tl);
    tl.request();
  } else if (KEYS[e.key]) {
    const [ft, fy, px, py] = KEYS[e.key];
    if (ft !== 1) zoom(tl, { ax: 0.5, ay: 0.5, ft, fy });
    else pan(tl, px, py);
  } else return;
  e.preventDefault();
}

/**
 * The hover box for slice `i` at canvas point (x, y), and the hook's `hover`.
 * @param {RankTimeline} tl
 * @param {number} i
 * @param {{ x: number, y: number }} at
 */
function showTip(tl, i, at) {
  const tip = tl.options.tip;
  if (i < 0) {
    tip.hidden = true;
    setTestHook({ hover: null });
    return;
  }
  const e = tl.t.event(i);
  const lines = [
    `${e.name}${e.cat ? ` (${e.cat})` : ''}`,
    `rank ${e.rank ?? '—'} · compile id ${e.compile_id ?? 'none'}`,
    `at ${formatUs(e.start_us - tl.origin - (tl.shift[tl.ranks.indexOf(e.rank ?? -1)] || 0))}${tl.aligned ? ' of its rank' : ''} · lasts ${formatUs(e.dur_us)} · depth ${e.depth}`,
    e.compile_id !== null && e.rank !== null ? 'click: this compile on this rank' : '',
  ];
  tip.textContent = lines.filter(Boolean).join('\n');
  tip.hidden = false;
  const box = tl.canvas.getBoundingClientRect();
  tip.style.left = `${Math.min(at.x + 14, box.width - 260)}px`;
  tip.style.top = `${at.y + 14}px`;
  setTestHook({ hover: e });
}

/**
 * Wheel, drag, keys, hover and click on the timeline's canvas.
 * @param {RankTimeline} tl
 */
export function wireTimeline(tl) {
  const c = tl.canvas;
  c.addEventListener('wheel', (e) => onWheel(tl, e), { passive: false });
  c.addEventListener('keydown', (e) => onKey(tl, e));
  c.addEventListener('mousedown', (e) => {
    tl.drag = { x: e.clientX, y: e.clientY, view: { ...tl.view }, moved: false };
    c.focus();
  });
  window.addEventListener('mousemove', (e) => {
    const d = tl.drag;
    if (d && (d.moved || Math.abs(e.clientX - d.x) + Math.abs(e.clientY - d.y) > 3)) {
      d.moved = true;
      const { w, h } = tl.plot();
      Object.assign(tl.view, d.view);
      pan(tl, -(e.clientX - d.x) / w, -(e.clientY - d.y) / h);
      return;
    }
    if (e.target === c) showTip(tl, tl.pick(pointOf(tl, e).x, pointOf(tl, e).y), pointOf(tl, e));
  });
  window.addEventListener('mouseup', () => {
    if (tl.drag && tl.drag.moved) c.dataset.dragged = '1';
    tl.drag = null;
  });
  c.addEventListener('mouseleave', () => showTip(tl, -1, { x: 0, y: 0 }));
  c.addEventListener('click', (e) => {
    if (c.dataset.dragged) return void delete c.dataset.dragged;
    const { x, y } = pointOf(tl, e);
    const i = tl.pick(x, y);
    const event = i >= 0 ? tl.t.event(i) : null;
    if (event && event.rank !== null && event.compile_id !== null) tl.options.onOpen(event.rank, event.compile_id);
  });
}

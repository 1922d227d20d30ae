// A virtual list for plain-JS viewers: only the rows on screen exist in the DOM, recycled as the
// list scrolls. Browsers cap an element's height (Chrome at about 33.5 million px), so past
// MAX_HEIGHT the scroll range is scaled: the scrollbar spans the whole list, each scrolled
// pixel moves proportionally more rows, and the rows themselves stay at their true height.

// 2 M px, well under every browser's cap: in headless chromium, scrolling a 10 M px range had
// twice the p95 frame time of a 0.5 M px one over the same million rows (bench/viewers.py).
// A million 24-px rows still get 2 scroll pixels each, so every row can be scrolled to.
export const MAX_HEIGHT = 2_000_000;

/**
 * The first row and its pixel offset for a scroll position (pure; exported for tests).
 * @param {{ count: number, rowHeight: number, viewport: number, scrollTop: number }} at
 * @returns {{ first: number, offset: number, virtual: number, scale: number }}
 */
export function scrollMapping({ count, rowHeight, viewport, scrollTop }) {
  const real = count * rowHeight;
  const virtual = Math.min(real, MAX_HEIGHT);
  const maxScroll = Math.max(0, virtual - viewport);
  const realMax = Math.max(0, real - viewport);
  const top = maxScroll > 0 ? (Math.min(Math.max(scrollTop, 0), maxScroll) / maxScroll) * realMax : 0;
  const first = Math.floor(top / rowHeight);
  return { first, offset: top - first * rowHeight, virtual, scale: maxScroll > 0 ? realMax / maxScroll : 1 };
}

/**
 * The scrollTop that puts row `index` at the top (pure; exported for tests).
 * @param {{ count: number, rowHeight: number, viewport: number, index: number }} at
 * @returns {number}
 */
export function scrollTopFor({ count, rowHeight, viewport, index }) {
  const real = count * rowHeight;
  const virtual = Math.min(real, MAX_HEIGHT);
  const maxScroll = Math.max(0, virtual - viewport);
  const realMax = Math.max(0, real - viewport);
  if (realMax === 0) return 0;
  return (Math.min(index * rowHeight, realMax) / realMax) * maxScroll;
}

export class VirtualList {
  /**
   * `container` scrolls; `createRow()` makes a row element, `renderRow(el, index)` fills it.
   * Options: `rowHeight` (px, fixed), `overscan` (rows drawn beyond the edges).
   * @param {HTMLElement} container
   * @param {{ rowHeight?: number, overscan?: number, createRow: () => HTMLElement, renderRow: (el: HTMLElement, index: number) => void }} options
   */
  constructor(container, { rowHeight = 24, createRow, renderRow, overscan = 4 }) {
    this.container = container;
    this.rowHeight = rowHeight;
    this.createRow = createRow;
    this.renderRow = renderRow;
    this.overscan = overscan;
    this.count = 0;
    this.height = 0;
    this.last = -1;
    /** @type {HTMLElement[]} */
    this.pool = [];
    this.first = 0;
    const doc = container.ownerDocument;
    this.layer = doc.createElement('div');
    this.layer.className = 'vl-layer';
    // Containment: a frame's new rows are laid out and painted inside the layer only.
    this.layer.style.cssText = 'position:sticky;top:0;left:0;right:0;overflow:hidden;contain:strict;';
    this.spacer = doc.createElement('div');
    this.spacer.className = 'vl-spacer';
    container.replaceChildren(this.layer, this.spacer);
    container.style.overflowY = 'auto';
    // Neither the height nor the scroll position is read from the DOM outside the observer and
    // the scroll event: reading them forces a layout of the page, and the first draws (before
    // the page was ever laid out) paid a full layout each. The window's height stands in for the
    // container's until the observer, which runs before the first paint, says what it is.
    this.height = (doc.defaultView && doc.defaultView.innerHeight) || 800;
    this.scrollTop = 0;
    this.onScroll = () => {
      this.scrollTop = this.container.scrollTop;
      this.draw();
    };
    container.addEventListener('scroll', this.onScroll, { passive: true });
    this.resize = new ResizeObserver((entries) => {
      const height = entries[entries.length - 1].contentRect.height;
      if (height !== this.height) {
        this.height = height;
        this.layout();
      }
    });
    this.resize.observe(container);
    this.layout();
  }

  /** The container's height, as the resize observer last saw it (never read while scrolling). */
  get viewport() {
    return this.height;
  }

  layout() {
    const h = this.height;
    this.layer.style.height = `${h}px`;
    const { virtual } = scrollMapping({ count: this.count, rowHeight: this.rowHeight, viewport: h, scrollTop: 0 });
    this.spacer.style.height = `${Math.max(0, virtual - h)}px`;
    const need = Math.ceil(h / this.rowHeight) + 1 + this.overscan;
    while (this.pool.length < need) {
      const el = this.createRow();
      el.style.position = 'absolute';
      el.style.left = '0';
      el.style.right = '0';
      el.style.height = `${this.rowHeight}px`;
      el.style.contain = 'layout style paint';
      this.layer.appendChild(el);
      this.pool.push(el);
    }
    this.draw();
  }

  /** @param {number} count */
  setCount(count) {
    this.count = count;
    // A shorter list clamps the scroll position (the browser's own scroll event follows).
    const { virtual } = scrollMapping({ count, rowHeight: this.rowHeight, viewport: this.height, scrollTop: 0 });
    this.scrollTop = Math.min(this.scrollTop, Math.max(0, virtual - this.height));
    this.layout();
  }

  /**
   * Scroll to pixel `top` of the (scaled) scroll range and draw. Set the position through this,
   * not the container's scrollTop: the list reads no layout outside its scroll events.
   * @param {number} top
   */
  scrollTo(top) {
    this.container.scrollTop = top;
    this.scrollTop = top;
    this.draw();
  }

  /** Row indices on screen (fully or partly visible) as of the last draw (no layout is forced). */
  /** @returns {{ first: number, last: number }} */
  visibleRange() {
    return { first: this.first, last: this.last };
  }

  draw() {
    const m = scrollMapping({ count: this.count, rowHeight: this.rowHeight, viewport: this.viewport, scrollTop: this.scrollTop });
    this.first = m.first;
    this.last = Math.min(this.count, m.first + Math.ceil((this.viewport + m.offset) / this.rowHeight)) - 1;
    for (let k = 0; k < this.pool.length; k += 1) {
      const el = this.pool[k];
      const index = m.first + k;
      if (index >= this.count) {
        el.style.display = 'none';
        continue;
      }
      el.style.display = '';
      el.style.transform = `translateY(${k * this.rowHeight - m.offset}px)`;
      this.renderRow(el, index);
    }
  }

  /**
   * @param {number} index
   * @param {'auto' | 'top' | 'center'} [align]
   */
  scrollToIndex(index, align = 'auto') {
    const { first, last } = this.visibleRange();
    const rows = Math.floor(this.viewport / this.rowHeight);
    let top = index;
    if (align === 'auto') {
      if (index > first && index < last) return;
      top = index <= first ? index : index - rows + 1;
    } else if (align === 'center') top = index - Math.floor(rows / 2);
    const target = scrollTopFor({ count: this.count, rowHeight: this.rowHeight, viewport: this.viewport, index: Math.max(0, top) });
    // Scaled scroll positions are fractional; the mapping rounds down, so nudge up a little.
    this.scrollTo(Math.ceil(target));
  }

  destroy() {
    this.container.removeEventListener('scroll', this.onScroll);
    this.resize.disconnect();
  }
}

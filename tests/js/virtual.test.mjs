// VirtualList against a minimal fake DOM that counts every read of layout (clientHeight,
// scrollTop, scrollHeight): a read while the page has unlaid-out changes forces the browser to
// lay it out then and there, which cost the explorer a full layout per read on its first draw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualList, scrollMapping } from '../../src/tlscope/viewers/lib/virtual.js';

function fakeDom(height) {
  const reads = [];
  const observers = [];
  globalThis.ResizeObserver = class {
    constructor(fn) {
      this.fn = fn;
      observers.push(this);
    }
    observe(el) {
      this.el = el;
    }
    disconnect() {}
  };
  const doc = {
    defaultView: { innerHeight: 700 },
    createElement: (tag) => ({ tag, style: {}, className: '', children: [], appendChild(c) { this.children.push(c); } }),
  };
  let scrollTop = 0;
  const listeners = {};
  const container = {
    ownerDocument: doc,
    style: {},
    replaceChildren(...nodes) { this.children = nodes; },
    addEventListener(name, fn) { listeners[name] = fn; },
    get clientHeight() { reads.push('clientHeight'); return height; },
    get scrollHeight() { reads.push('scrollHeight'); return 0; },
    get scrollTop() { reads.push('scrollTop'); return scrollTop; },
    set scrollTop(v) { scrollTop = v; },
  };
  // What the browser does: the observer reports the laid-out size, a scroll fires its event.
  const resize = () => observers.forEach((o) => o.fn([{ contentRect: { height } }]));
  const scroll = (to) => {
    scrollTop = to;
    listeners.scroll();
  };
  return { container, reads, resize, scroll };
}

test('VirtualList draws without reading layout; sizes come from the observer, positions from scroll events', () => {
  const dom = fakeDom(480);
  const drawn = [];
  const list = new VirtualList(dom.container, { rowHeight: 24, overscan: 0, createRow: () => ({ style: {} }), renderRow: (el, i) => drawn.push(i) });
  list.setCount(1000);
  list.draw();
  assert.deepEqual(dom.reads, [], 'construction, setCount and draw read no layout');
  assert.equal(list.viewport, 700); // the window's height until the observer reports
  dom.resize();
  assert.equal(list.viewport, 480);
  assert.deepEqual(list.visibleRange(), { first: 0, last: 19 });
  dom.scroll(240); // the scroll event is where the position is read
  assert.deepEqual(dom.reads, ['scrollTop']);
  const at = scrollMapping({ count: 1000, rowHeight: 24, viewport: 480, scrollTop: 240 });
  assert.equal(list.visibleRange().first, at.first);
  assert.ok(at.first >= 9 && at.first <= 10);
  list.scrollToIndex(500, 'auto');
  assert.equal(list.visibleRange().last, 500);
  list.setCount(5); // a shorter list: the position is clamped, not read
  assert.deepEqual(list.visibleRange(), { first: 0, last: 4 });
  assert.deepEqual(dom.reads, ['scrollTop']);
});

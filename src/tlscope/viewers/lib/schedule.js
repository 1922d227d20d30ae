// Giving the page its turns: the client indexes megabytes of events on the page's one thread, so
// it hands the thread back often enough for the page to draw and answer while it loads.

/** Resolves after the next frame is drawn (or after 100 ms where frames do not come: a hidden tab, node). */
export function nextFrame() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    if (typeof requestAnimationFrame !== 'function') return;
    requestAnimationFrame(() => setTimeout(() => {
      clearTimeout(timer);
      resolve(undefined);
    }, 0));
  });
}

/** Indexing gives the page a turn at least this often (ms), so it draws and answers while loading. */
export const SLICE_MS = 30;

/**
 * A time slicer: `due()` says whether the slice is used up, `pause()` gives the page a turn
 * (a macrotask, so it can draw) and starts a new slice, `restart()` starts one without pausing.
 */
export function slicer(ms = SLICE_MS) {
  let started = Date.now();
  return {
    due: () => Date.now() - started > ms,
    restart: () => {
      started = Date.now();
    },
    pause: async () => {
      await new Promise((resolve) => {
        setTimeout(resolve, 0);
      });
      started = Date.now();
    },
  };
}

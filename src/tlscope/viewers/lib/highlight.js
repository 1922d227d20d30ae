// A small syntax highlighter for payloads (Python-like code, FX graphs, JSON), line by line, so a
// viewer highlights only the lines on screen. Tokens are [class, text] pairs: the caller puts
// the text in with textContent, so a payload can never inject markup.

const PY_KEYWORDS = new Set(
  ('False None True and as assert async await break class continue def del elif else except finally for from ' +
    'global if import in is lambda nonlocal not or pass raise return try while with yield').split(' '),
);
const PY_BUILTINS = new Set('self cls print len range int float str bool list dict tuple set super isinstance'.split(' '));

const PY_TOKEN = /(#.*$)|([rRbBuUfF]{0,2}(?:"""|'''))|([rRbBuUfF]{0,2}"(?:[^"\\]|\\.)*"|[rRbBuUfF]{0,2}'(?:[^'\\]|\\.)*')|(@[\w.]+)|(\b\d[\w.]*\b)|([A-Za-z_]\w*)/g;

/**
 * A token: its class ('' for plain text) and its text.
 * @typedef {[cls: string, text: string]} Token
 */

/**
 * @param {Token[]} tokens
 * @param {string} cls
 * @param {string} text
 */
function pushText(tokens, cls, text) {
  if (text) tokens.push([cls, text]);
}

/**
 * Tokens of one line of Python; `state` is the open triple quote ('"""', "'''") or null.
 * @param {string} line
 * @param {string | null} [state]
 * @returns {{ tokens: Token[], state: string | null }}
 */
export function highlightPython(line, state = null) {
  /** @type {Token[]} */
  const tokens = [];
  let at = 0;
  let open = state;
  if (open) {
    const end = line.indexOf(open);
    if (end < 0) return { tokens: [['str', line]], state: open };
    pushText(tokens, 'str', line.slice(0, end + 3));
    at = end + 3;
    open = null;
  }
  PY_TOKEN.lastIndex = at;
  let prevWord = '';
  for (let m = PY_TOKEN.exec(line); m; m = PY_TOKEN.exec(line)) {
    pushText(tokens, '', line.slice(at, m.index));
    at = m.index + m[0].length;
    if (m[1]) pushText(tokens, 'com', m[1]);
    else if (m[2]) {
      const quote = m[2].slice(-3);
      const end = line.indexOf(quote, at);
      if (end < 0) {
        pushText(tokens, 'str', line.slice(m.index));
        return { tokens, state: quote };
      }
      pushText(tokens, 'str', line.slice(m.index, end + 3));
      at = end + 3;
      PY_TOKEN.lastIndex = at;
    } else if (m[3]) pushText(tokens, 'str', m[3]);
    else if (m[4]) pushText(tokens, 'dec', m[4]);
    else if (m[5]) pushText(tokens, 'num', m[5]);
    else {
      const word = m[6];
      let cls = '';
      if (PY_KEYWORDS.has(word)) cls = 'kw';
      else if (prevWord === 'def' || prevWord === 'class') cls = 'fn';
      else if (PY_BUILTINS.has(word)) cls = 'bi';
      pushText(tokens, cls, word);
      prevWord = word;
    }
  }
  pushText(tokens, '', line.slice(at));
  return { tokens, state: open };
}

const JSON_TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

/**
 * Tokens of one line of (pretty-printed) JSON.
 * @param {string} line
 * @returns {{ tokens: Token[], state: null }}
 */
export function highlightJson(line) {
  /** @type {Token[]} */
  const tokens = [];
  let at = 0;
  JSON_TOKEN.lastIndex = 0;
  for (let m = JSON_TOKEN.exec(line); m; m = JSON_TOKEN.exec(line)) {
    pushText(tokens, '', line.slice(at, m.index));
    at = m.index + m[0].length;
    if (m[1]) {
      pushText(tokens, m[2] ? 'key' : 'str', m[1]);
      pushText(tokens, '', m[2] || '');
    } else if (m[3]) pushText(tokens, 'num', m[3]);
    else pushText(tokens, 'kw', m[4]);
  }
  pushText(tokens, '', line.slice(at));
  return { tokens, state: null };
}

/**
 * Guess a payload's language: 'json', 'python' or 'text'.
 * @param {string} text
 * @param {string} [hint]
 * @returns {'json' | 'python' | 'text'}
 */
export function guessLanguage(text, hint = '') {
  const head = text.slice(0, 2000).trimStart();
  if (hint === 'json' || ((head.startsWith('{') || head.startsWith('[')) && /^[[{]\s*["{[\]}\d-]/.test(head))) return 'json';
  if (/^(def |class |import |from |#|@|\s*\w+ = )/m.test(head) || head.includes('def forward(')) return 'python';
  return 'text';
}

/**
 * Lines of a payload with their tokens computed on demand: `tokens(i)` highlights line i,
 * carrying multi-line string state forward only as far as needed (checkpoints every 256 lines).
 */
export class LazyHighlighter {
  /**
   * @param {string} text
   * @param {'json' | 'python' | 'text'} language
   */
  constructor(text, language) {
    this.lines = text.split('\n');
    this.language = language;
    /** @type {Array<string | null>} state at the start of line k * 256 */
    this.checkpoints = [null];
  }

  /**
   * The open triple quote at the start of line `i` (python), or null.
   * @param {number} i
   * @returns {string | null}
   */
  stateAt(i) {
    if (this.language !== 'python') return null;
    const step = 256;
    let k = Math.min(Math.floor(i / step), this.checkpoints.length - 1);
    let state = this.checkpoints[k];
    for (let line = k * step; line < i; line += 1) {
      state = quoteState(this.lines[line], state);
      if ((line + 1) % step === 0 && (line + 1) / step === this.checkpoints.length) {
        this.checkpoints.push(state);
        k += 1;
      }
    }
    return state;
  }

  /**
   * @param {number} i
   * @returns {Token[]}
   */
  tokens(i) {
    const line = this.lines[i] ?? '';
    if (line.length > 4000) return [['', line]]; // a giant line is shown plain
    if (this.language === 'python') return highlightPython(line, this.stateAt(i)).tokens;
    if (this.language === 'json') return highlightJson(line).tokens;
    return [['', line]];
  }
}

/**
 * @param {string} line
 * @param {string | null} state
 * @returns {string | null}
 */
function quoteState(line, state) {
  if (!state && !line.includes('"""') && !line.includes("'''")) return null;
  return highlightPython(line, state).state;
}

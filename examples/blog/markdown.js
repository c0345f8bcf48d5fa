// A small Markdown renderer that builds DOM nodes (never innerHTML): headings, paragraphs,
// lists, block quotes, fenced code, inline code, emphasis, strong and links (http(s) only).
// Enough for a blog's posts; swap in a full renderer (and a sanitizer) for more.
/* global document */

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*]+\*|_[^_]+_)|(\[[^\]]+\]\([^)\s]+\))/u;

function inline(text) {
  const out = [];
  let rest = text;
  for (let m = INLINE.exec(rest); m; m = INLINE.exec(rest)) {
    if (m.index > 0) out.push(document.createTextNode(rest.slice(0, m.index)));
    const [token] = m;
    let node;
    if (m[1]) {
      node = document.createElement('code');
      node.textContent = token.slice(1, -1);
    } else if (m[2]) {
      node = document.createElement('strong');
      node.append(...inline(token.slice(2, -2)));
    } else if (m[3]) {
      node = document.createElement('em');
      node.append(...inline(token.slice(1, -1)));
    } else {
      const [, label, href] = /^\[([^\]]+)\]\(([^)\s]+)\)$/u.exec(token);
      if (/^https?:\/\//iu.test(href)) {
        node = document.createElement('a');
        node.href = href;
        node.rel = 'noopener noreferrer';
        node.append(...inline(label));
      } else {
        node = document.createTextNode(label);
      }
    }
    out.push(node);
    rest = rest.slice(m.index + token.length);
  }
  if (rest) out.push(document.createTextNode(rest));
  return out;
}

/** The Markdown text as a list of block elements. */
export function renderMarkdown(source) {
  const lines = source.replace(/\r\n?/gu, '\n').split('\n');
  const blocks = [];
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) {
      const p = document.createElement('p');
      p.append(...inline(para.join(' ')));
      blocks.push(p);
      para = [];
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('```')) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
      const pre = document.createElement('pre');
      const el = document.createElement('code');
      el.textContent = code.join('\n');
      pre.append(el);
      blocks.push(pre);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/u.exec(line);
    const item = /^\s*(?:[-*+]|(\d+)\.)\s+(.*)$/u.exec(line);
    if (heading) {
      flush();
      const h = document.createElement(`h${Math.min(6, heading[1].length + 2)}`);
      h.append(...inline(heading[2]));
      blocks.push(h);
    } else if (item) {
      if (para.length) flush();
      const tag = item[1] ? 'ol' : 'ul';
      if (!list || list.tagName.toLowerCase() !== tag) {
        list = document.createElement(tag);
        blocks.push(list);
      }
      const li = document.createElement('li');
      li.append(...inline(item[2]));
      list.append(li);
    } else if (line.startsWith('>')) {
      flush();
      const q = document.createElement('blockquote');
      q.append(...inline(line.replace(/^>\s?/u, '')));
      blocks.push(q);
    } else if (line.trim() === '') {
      flush();
    } else {
      list = null;
      para.push(line.trim());
    }
  }
  flush();
  return blocks;
}

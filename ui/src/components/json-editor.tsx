/**
 * The JSON editor of the records browser (loaded on demand: its own chunk). CodeMirror 6 with
 * JSON highlighting, bracket matching, undo history and parse errors. It is mounted in a
 * shadow root: CodeMirror then keeps its styles in a constructed style sheet of that root,
 * which the console's strict Content-Security-Policy (no inline <style>) allows.
 */
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, foldGutter, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { linter, lintGutter } from '@codemirror/lint';
import { tags } from '@lezer/highlight';
import { isDark as consoleDark } from '../lib/theme';


const darkHighlight = HighlightStyle.define([
  { tag: tags.propertyName, color: '#9cdcfe' },
  { tag: tags.string, color: '#ce9178' },
  { tag: tags.number, color: '#b5cea8' },
  { tag: [tags.bool, tags.null], color: '#569cd6' },
  { tag: tags.invalid, color: '#f44747' },
]);

function theme(isDark: boolean) {
  return EditorView.theme(
    {
      '&': { fontSize: '13px', height: '100%', backgroundColor: isDark ? '#111418' : '#ffffff', color: isDark ? '#e6e6e6' : '#1b1f24' },
      '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', caretColor: isDark ? '#fff' : '#000' },
      '.cm-gutters': { backgroundColor: isDark ? '#171b21' : '#f3f4f6', color: isDark ? '#8b949e' : '#57606a', border: 'none' },
      '&.cm-focused': { outline: `2px solid ${isDark ? '#6cb6ff' : '#0a58ca'}` },
      '.cm-scroller': { overflow: 'auto' },
    },
    { dark: isDark },
  );
}

export default function JsonEditor({ value, onChange, label }: { value: string; onChange: (text: string) => void; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const change = useRef(onChange);
  change.current = onChange;
  // Read while rendering: a theme change re-renders, and the editor is drawn again in it.
  const isDark = consoleDark.value;
  const text = useRef(value);
  text.current = value;

  useEffect(() => {
    const el = host.current!;
    const root = el.shadowRoot ?? el.attachShadow({ mode: 'open' });
    const doc = view.current?.state.doc.toString() ?? text.current;
    view.current = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc,
        extensions: [
          lineNumbers(),
          foldGutter(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          json(),
          linter(jsonParseLinter()),
          lintGutter(),
          syntaxHighlighting(isDark ? darkHighlight : defaultHighlightStyle),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          theme(isDark),
          // tabindex: axe sees the scroller's focusable content (contenteditable alone does not count).
          EditorView.contentAttributes.of({ 'aria-label': label, tabindex: '0' }),
          EditorView.lineWrapping,
          EditorView.updateListener.of((u) => {
            if (u.docChanged) change.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    return () => view.current?.destroy();
  }, [isDark]);

  // A new document from outside (another row opened): replace the text. A layout effect, not a
  // passive one: it runs in the same task as the render, while the editor still holds the text
  // this render was made from. A passive effect may run only after the next keystroke (Preact
  // runs a component's pending effects at its next render at the latest), see the editor ahead
  // of its stale `value` and write the older text back; that write is emitted as a change, the
  // parent renders with it while the newer text's effect is pending, and the two texts swap
  // forever in microtasks: typing fast (two keys in one frame) hung the page
  // (docs/functions.md "The console").
  useLayoutEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div ref={host} class="json-editor" />;
}

/**
 * The functions' code editor (loaded on demand: its own chunk). CodeMirror 6 with JavaScript or
 * TypeScript highlighting, and completions for the `plinth` API a function receives (its second
 * argument, see PLINTH_TYPES) and the sandbox's globals. Mounted in a shadow root like the JSON
 * editor, for the console's strict Content-Security-Policy.
 */
import { useEffect, useRef } from 'preact/hooks';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, HighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { javascript, javascriptLanguage, typescriptLanguage } from '@codemirror/lang-javascript';
import { tags } from '@lezer/highlight';
import { isDark as consoleDark } from '../lib/theme';

/** What `plinth` offers inside a function (src/modules/functions/sandbox/guest-prelude.ts), for completions. */
const MEMBERS: Record<string, Completion[]> = {
  plinth: [
    { label: 'data', type: 'namespace', info: "The project's collections, with the caller's identity and the access rules" },
    { label: 'fetch', type: 'function', detail: '(url, {method, headers, body}) → Promise<Response>', info: 'Outbound HTTP (no loopback or private addresses)' },
    { label: 'env', type: 'variable', detail: 'Record<string, string>', info: 'The project\'s function secrets' },
    { label: 'caller', type: 'variable', detail: '{ userId?, … }', info: 'Who called the function' },
    { label: 'response', type: 'function', detail: '(body, {status, headers}) → Response', info: "An HTTP function's answer with its own status and headers" },
  ],
  data: [
    { label: 'collection', type: 'function', detail: '(name) → Collection' },
    { label: 'service', type: 'namespace', info: 'The same API acting as the service (bypasses access rules)' },
  ],
  service: [{ label: 'collection', type: 'function', detail: '(name) → Collection' }],
  collection: [
    { label: 'get', type: 'method', detail: '(id, query?) → Promise<Doc>' },
    { label: 'list', type: 'method', detail: '(query?) → Promise<{items, …}>' },
    { label: 'count', type: 'method', detail: '(query?) → Promise<number>' },
    { label: 'create', type: 'method', detail: '(data) → Promise<Doc>' },
    { label: 'update', type: 'method', detail: '(id, data) → Promise<Doc>' },
    { label: 'delete', type: 'method', detail: '(id, {hard?}) → Promise' },
    { label: 'restore', type: 'method', detail: '(id) → Promise<Doc>' },
  ],
};
const GLOBALS: Completion[] = [
  { label: 'plinth', type: 'variable', info: 'The second argument: export default async (event, plinth) => …' },
  { label: 'PlinthError', type: 'class', detail: 'new PlinthError(message, {status, code})', info: 'Throw to refuse with a status and a code' },
  { label: 'console', type: 'variable', info: 'log, info, warn, error, debug: the invocation log' },
  ...['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'crypto', 'atob', 'btoa', 'structuredClone', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'JSON', 'Math', 'Date', 'Promise'].map(
    (label) => ({ label, type: 'variable' }) as Completion,
  ),
];

/** `plinth.` → members of plinth; `plinth.data.` / `.service.` → collection(); `.collection('x').` → the methods. */
export function plinthCompletions(context: CompletionContext): CompletionResult | null {
  const before = context.state.doc.sliceString(Math.max(0, context.pos - 200), context.pos);
  const member = /(?:\b(plinth|data|service)|\bcollection\([^()]*\))\.(\w*)$/.exec(before);
  if (member) {
    const key = member[1] ?? 'collection';
    return { from: context.pos - member[2]!.length, options: MEMBERS[key]!, validFor: /^\w*$/ };
  }
  const word = context.matchBefore(/\w+/);
  if (!word || (word.from === word.to && !context.explicit)) return null;
  if (/\.\s*$/.test(context.state.doc.sliceString(Math.max(0, word.from - 5), word.from))) return null;
  return { from: word.from, options: GLOBALS, validFor: /^\w*$/ };
}

const darkHighlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.modifier, tags.bool, tags.null], color: '#569cd6' },
  { tag: [tags.string, tags.special(tags.string)], color: '#ce9178' },
  { tag: tags.number, color: '#b5cea8' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#6a9955' },
  { tag: [tags.propertyName, tags.variableName], color: '#9cdcfe' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: '#dcdcaa' },
  { tag: [tags.typeName, tags.className], color: '#4ec9b0' },
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
      '.cm-tooltip': { backgroundColor: isDark ? '#171b21' : '#ffffff', color: isDark ? '#e6e6e6' : '#1b1f24', border: '1px solid #8b949e' },
      '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: isDark ? '#264f78' : '#cfe3ff', color: isDark ? '#fff' : '#000' },
      '.cm-completionDetail': { color: isDark ? '#b0b8c0' : '#4a5560', marginLeft: '0.5em' },
    },
    { dark: isDark },
  );
}

export default function CodeEditor({ value, onChange, label, language }: { value: string; onChange: (text: string) => void; label: string; language: 'js' | 'ts' }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const change = useRef(onChange);
  change.current = onChange;
  const isDark = consoleDark.value;
  const text = useRef(value);
  text.current = value;

  useEffect(() => {
    const el = host.current!;
    const root = el.shadowRoot ?? el.attachShadow({ mode: 'open' });
    const doc = view.current?.state.doc.toString() ?? text.current;
    view.current?.destroy();
    const lang = language === 'ts' ? typescriptLanguage : javascriptLanguage;
    view.current = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          javascript({ typescript: language === 'ts' }),
          lang.data.of({ autocomplete: plinthCompletions }),
          autocompletion({ activateOnTyping: false }),
          syntaxHighlighting(isDark ? darkHighlight : defaultHighlightStyle),
          keymap.of([...closeBracketsKeymap, ...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
          theme(isDark),
          EditorView.contentAttributes.of({ 'aria-label': label, tabindex: '0' }),
          EditorView.lineWrapping,
          EditorView.updateListener.of((u) => {
            if (u.docChanged) change.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    return () => {
      view.current?.destroy();
      view.current = null;
    };
  }, [isDark, language]);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div ref={host} class="code-editor" />;
}

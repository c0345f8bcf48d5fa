/**
 * The functions' code editor (loaded on demand with the Functions screen's editor chunk).
 * CodeMirror 6: JavaScript or TypeScript highlighting, bracket matching and closing, indentation,
 * undo history, line numbers, search (Ctrl/Cmd-F), and completions for the `plinth` API a
 * function receives (its second argument), the sandbox's globals, the project's collection names
 * inside `collection('…')` and its secret names after `plinth.env.`. Mounted in a shadow root like
 * the JSON editor: CodeMirror keeps its styles in a constructed style sheet of that root, which
 * the console's strict Content-Security-Policy (no inline <style>) allows, and the console's own
 * CSS stays out of it.
 *
 * Keyboard: Tab indents and Shift-Tab dedents (indentWithTab); Escape then Tab leaves the editor
 * (CodeMirror's tab focus escape), as the hint under the text says; Ctrl-Space asks for
 * completions, which also open by themselves after `plinth.` and the like.
 *
 * The `value` prop is synced into the editor in a layout effect, never a passive one: see
 * syncValue below (the console's "Enter hangs the page" bug).
 */
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers, showPanel } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, foldGutter, foldKeymap, HighlightStyle, indentOnInput, syntaxHighlighting, syntaxTree } from '@codemirror/language';
import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
  type Completion,
  type CompletionContext,
  type CompletionResult,
} from '@codemirror/autocomplete';
import { highlightSelectionMatches, search, searchKeymap } from '@codemirror/search';
import { javascript, javascriptLanguage } from '@codemirror/lang-javascript';
import { tags } from '@lezer/highlight';
import { isDark as consoleDark } from '../lib/theme';

/** What the editor completes besides the fixed API: read at each completion, so it may change. */
export interface ProjectNames {
  collections: readonly string[];
  secrets: readonly string[];
}

const fn = (label: string, detail: string, info: string): Completion => ({ label, type: 'function', detail, info });
const method = (label: string, detail: string, info: string): Completion => ({ label, type: 'method', detail, info });
const prop = (label: string, detail: string, info: string, type = 'property'): Completion => ({ label, type, detail, info });

/** The members of each part of `plinth` (src/modules/functions/sandbox/guest-prelude.ts, docs/functions.md). */
const PLINTH: Completion[] = [
  prop('data', 'collections', "The project's collections, as the caller: data.collection(name) under the access rules; data.service for the service", 'namespace'),
  prop('mail', 'mail', 'mail.send(message, {idempotencyKey}?): one mail from the project, as POST /api/mail/send queues it', 'namespace'),
  fn('fetch', '(url, init?) → Promise<Response>', 'Outbound HTTP to public addresses only (no loopback, private, link-local or metadata address); 10 s, answers up to 2 MiB'),
  prop('env', 'Record<string, string>', "The project's function secrets (read-only): plinth.env.NAME", 'variable'),
  prop('caller', '{ userId, keyKind, claims }', 'Who the function acts for: the user id (or null), the API key kind and the custom token claims'),
  fn('response', '(body, {status, headers}?) → Response', "An HTTP function's answer with its own status and headers (a plain value is JSON with 200)"),
];
const DATA: Completion[] = [
  fn('collection', '(name) → Collection', "A collection as the caller: the collection's access rules and owner checks apply, as for the caller's own request"),
  prop('service', 'as the service', "The same API with the project's secret-key access: bypasses the access rules", 'namespace'),
];
const SERVICE: Completion[] = [fn('collection', '(name) → Collection', "A collection as the service (the project's secret-key access)")];
const COLLECTION: Completion[] = [
  method('get', '(id, query?) → Promise<Doc>', 'One document by id; query: fields, expand…'),
  method('list', '(query?) → Promise<{ items, … }>', "The data API's filters, sort, limit, page, cursor… as an object"),
  method('count', '(query?) → Promise<number>', 'How many documents match the filters'),
  method('create', '(doc) → Promise<Doc>', 'Creates a document (before-hooks of the collection run)'),
  method('update', '(id, patch) → Promise<Doc>', 'Changes the given fields of a document'),
  method('delete', '(id, {hard}?) → Promise', 'Deletes a document (to the trash unless hard: true)'),
  method('restore', '(id) → Promise<Doc>', 'Brings a deleted document back from the trash'),
];
const MAIL: Completion[] = [
  method('send', '(message, {idempotencyKey}?) → Promise', 'message: {to, subject, text|html} or {to, templateName|templateId, variables}; at most 20 per invocation'),
];
const CALLER: Completion[] = [
  prop('userId', 'string | null', "The signed-in user the function acts for, or null (anonymous, the service, a schedule)"),
  prop('keyKind', "'publishable' | 'secret'", 'The kind of API key the call came with'),
  prop('claims', 'object | null', "The custom claims of the caller's verified access token (token-claims hook), or null"),
];
const CONSOLE: Completion[] = ['log', 'info', 'warn', 'error', 'debug'].map((level) =>
  method(level, '(...values)', `A ${level} line in the invocation log (64 KiB per invocation)`),
);
const GLOBALS: Completion[] = [
  prop('plinth', 'the Plinth API', 'The second argument: export default async (event, plinth) => …', 'variable'),
  { label: 'PlinthError', type: 'class', detail: 'new PlinthError(message, {status, code})', info: 'Throw it to refuse with a status and a code the caller receives' },
  fn('fetch', '(url, init?) → Promise<Response>', 'The same as plinth.fetch: public addresses only'),
  prop('console', 'log, info, warn, error, debug', 'Lines kept in the invocation log', 'variable'),
  ...['URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'crypto', 'atob', 'btoa', 'structuredClone', 'setTimeout', 'clearTimeout'].map(
    (label) => ({ label, type: 'variable', detail: 'Web standard' }) as Completion,
  ),
];

const ID = '[\\w$]';
const DOT = '\\s*\\.\\s*';
const chain = (parts: string) => new RegExp(`(?:^|[^\\w$.])${parts}${DOT}(${ID}*)$`);
/** The member chains completed after a dot, most specific first: `plinth.data.service.` before `plinth.data.`. */
const MEMBERS: Array<[RegExp, (names: ProjectNames) => Completion[]]> = [
  [new RegExp(`\\bcollection\\s*\\([^()]*\\)${DOT}(${ID}*)$`), () => COLLECTION],
  [chain(`plinth${DOT}data${DOT}service`), () => SERVICE],
  [chain(`plinth${DOT}data`), () => DATA],
  [chain(`plinth${DOT}mail`), () => MAIL],
  [chain(`plinth${DOT}caller`), () => CALLER],
  [chain(`plinth${DOT}env`), (n) => n.secrets.map((label) => ({ label, type: 'constant', detail: 'secret' }))],
  [chain('plinth'), () => PLINTH],
  [chain('console'), () => CONSOLE],
];
/** Inside the string argument of `collection(`: the project's collection names. */
const COLLECTION_ARG = /\bcollection\s*\(\s*(['"`])([\w-]*)$/;

/** A completion source for the `plinth` API, the sandbox's globals and the project's names. */
export function plinthCompletions(names: () => ProjectNames) {
  return (context: CompletionContext): CompletionResult | null => {
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(Math.max(0, context.pos - line.from - 300), context.pos - line.from);
    const node = syntaxTree(context.state).resolveInner(context.pos, -1);
    if (/Comment/.test(node.name)) return null;
    const arg = COLLECTION_ARG.exec(before);
    if (arg) {
      const options = names().collections.map((label): Completion => ({ label, type: 'constant', detail: 'collection', boost: 1 }));
      return options.length ? { from: context.pos - arg[2]!.length, options, validFor: /^[\w-]*$/ } : null;
    }
    if (node.name === 'String' || node.name === 'TemplateString') return null;
    for (const [re, list] of MEMBERS) {
      const m = re.exec(before);
      if (m) return { from: context.pos - m[1]!.length, options: list(names()), validFor: /^[\w$]*$/ };
    }
    const word = context.matchBefore(/[\w$]+/);
    if (!word && !context.explicit) return null;
    if (/\.\s*$/.test(before.slice(0, (word?.from ?? context.pos) - line.from))) return null;
    return { from: word?.from ?? context.pos, options: GLOBALS, validFor: /^[\w$]*$/ };
  };
}

const darkHighlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.modifier, tags.bool, tags.null, tags.operatorKeyword], color: '#569cd6' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: '#ce9178' },
  { tag: tags.number, color: '#b5cea8' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#7fb069' },
  { tag: [tags.propertyName, tags.variableName, tags.definition(tags.variableName)], color: '#9cdcfe' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: '#dcdcaa' },
  { tag: [tags.typeName, tags.className, tags.namespace], color: '#4ec9b0' },
  { tag: tags.invalid, color: '#f44747' },
]);

function theme(isDark: boolean): Extension {
  const fg = isDark ? '#e6e6e6' : '#1b1f24';
  const bg = isDark ? '#111418' : '#ffffff';
  const panel = isDark ? '#171b21' : '#f3f4f6';
  const muted = isDark ? '#a9b1ba' : '#57606a';
  return EditorView.theme(
    {
      '&': { fontSize: '13px', height: '100%', backgroundColor: bg, color: fg },
      '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', caretColor: isDark ? '#fff' : '#000' },
      '.cm-gutters': { backgroundColor: panel, color: muted, border: 'none' },
      '.cm-activeLineGutter': { backgroundColor: isDark ? '#22272e' : '#e4e7eb', color: fg },
      '.cm-activeLine': { backgroundColor: isDark ? '#1a1f26' : '#f5f8fc' },
      '&.cm-focused': { outline: `2px solid ${isDark ? '#6cb6ff' : '#0a58ca'}` },
      '.cm-scroller': { overflow: 'auto' },
      '.cm-tooltip': { backgroundColor: panel, color: fg, border: `1px solid ${muted}` },
      '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: isDark ? '#264f78' : '#cfe3ff', color: isDark ? '#fff' : '#000' },
      '.cm-completionDetail': { color: muted, marginLeft: '0.5em', fontStyle: 'normal' },
      '.cm-tooltip-autocomplete ul li[aria-selected] .cm-completionDetail': { color: 'inherit' },
      '.cm-completionInfo': { backgroundColor: panel, color: fg, border: `1px solid ${muted}`, maxWidth: '22rem', padding: '0.3rem 0.5rem' },
      '.cm-panels': { backgroundColor: panel, color: fg },
      '.cm-panels.cm-panels-bottom': { borderTop: `1px solid ${isDark ? '#30363d' : '#d0d7de'}` },
      '.cm-panel.cm-search input, .cm-panel.cm-search button': { color: fg, backgroundColor: bg, border: `1px solid ${muted}` },
      '.cm-panel.cm-search label': { color: fg },
      '.cm-searchMatch': { backgroundColor: isDark ? '#614d00' : '#fff2a8' },
      '.cm-selectionMatch': { backgroundColor: isDark ? '#2c3a4a' : '#e1ecfb' },
      '.cm-editor-hint': { fontSize: '12px', padding: '0.25rem 0.5rem', color: muted, fontFamily: 'system-ui, sans-serif' },
    },
    { dark: isDark },
  );
}

export const HINT = 'Tab indents, Shift-Tab dedents. Esc then Tab leaves the editor. Ctrl-Space: completions. Ctrl-F: search.';

/** The hint under the text, also the editor's accessible description (same shadow root, so aria-describedby reaches it). */
function hintPanel(id: string): Extension {
  return showPanel.of(() => {
    const dom = document.createElement('div');
    dom.className = 'cm-editor-hint';
    dom.id = id;
    dom.textContent = HINT;
    return { dom, bottom: true };
  });
}

let seq = 0;

export default function CodeEditor({ value, onChange, label, language, names }: {
  value: string;
  onChange: (text: string) => void;
  label: string;
  language: 'js' | 'ts';
  names: ProjectNames;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const compartments = useRef({ lang: new Compartment(), theme: new Compartment(), label: new Compartment() });
  const latest = useRef({ onChange, names });
  latest.current = { onChange, names };
  const isDark = consoleDark.value;
  const initial = useRef({ value, language, isDark, label });

  // One view for the component's life: language, theme and label change through compartments,
  // so the undo history and the cursor survive them. Made in a layout effect, so it exists
  // before the value sync below first runs.
  useLayoutEffect(() => {
    const el = host.current!;
    const root = el.shadowRoot ?? el.attachShadow({ mode: 'open' });
    const hintId = `cm-hint-${++seq}`;
    const c = compartments.current;
    const init = initial.current;
    const v = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc: init.value,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          foldGutter(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          highlightSelectionMatches(),
          search({ top: true }),
          c.lang.of(javascript({ typescript: init.language === 'ts' })),
          javascriptLanguage.data.of({ autocomplete: plinthCompletions(() => latest.current.names) }),
          autocompletion({ icons: true }),
          c.theme.of([syntaxHighlighting(init.isDark ? darkHighlight : defaultHighlightStyle), theme(init.isDark)]),
          keymap.of([...closeBracketsKeymap, ...completionKeymap, ...searchKeymap, ...foldKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
          // tabindex: axe sees the scroller's focusable content (contenteditable alone does not count).
          c.label.of(EditorView.contentAttributes.of({ 'aria-label': init.label, 'aria-describedby': hintId, tabindex: '0' })),
          hintPanel(hintId),
          EditorView.lineWrapping,
          EditorView.updateListener.of((u) => {
            if (u.docChanged) latest.current.onChange(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: compartments.current.lang.reconfigure(javascript({ typescript: language === 'ts' })) });
  }, [language]);
  useEffect(() => {
    view.current?.dispatch({ effects: compartments.current.theme.reconfigure([syntaxHighlighting(isDark ? darkHighlight : defaultHighlightStyle), theme(isDark)]) });
  }, [isDark]);
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const hintId = v.dom.querySelector('.cm-editor-hint')?.id ?? '';
    v.dispatch({ effects: compartments.current.label.reconfigure(EditorView.contentAttributes.of({ 'aria-label': label, 'aria-describedby': hintId, tabindex: '0' })) });
  }, [label]);

  // A new text from outside (Revert): replace the document. A layout effect on purpose: it
  // runs in the same task as the render, while the editor still holds the text this render was
  // made from. A passive effect could run later, after the next keystroke, (Preact runs a
  // component's pending effects at its next render at the latest) and see the editor ahead of
  // its stale `value`: writing that older text back emits it as a change, the parent renders
  // with it while the newer text's effect is pending, and the two texts swap forever in
  // microtasks — the hung page of docs/functions.md "The console".
  useLayoutEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div ref={host} class="code-editor" />;
}

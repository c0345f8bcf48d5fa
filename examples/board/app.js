/* global document, window */
// The team board example: private lists, lists shared by email through a `members` collection
// (access rules with lookups decide who reads and writes a list's cards, docs/rules.md), cards
// moved between columns in one atomic batch, cards edited with If-Match (of two people editing
// the same card, the one who saves second is told instead of overwriting the first), live
// updates through realtime that resume after a network cut, soft delete and restore. All of it
// through @plinth/client (docs/client.md). No hand-written HTTP.
import { createClient, realtime, PreconditionFailedError } from '/client.js';
import config from '/config.js';
import { signInForm } from '/lib/signin.js';

const client = createClient({ url: config.baseUrl, apiKey: config.publishableKey }); // the session in localStorage
const lists = client.collection('lists');
const members = client.collection('members');
const cards = client.collection('cards');
const $ = (id) => document.getElementById(id);
const COLUMNS = ['todo', 'doing', 'done'];
const NAMES = { todo: 'To do', doing: 'Doing', done: 'Done' };

const state = {
  me: null,
  lists: new Map(), // id → list
  current: null,
  cards: new Map(), // id → card of the current list (deleted ones too)
  // The card being edited: the version the editor opened (what its save must still find: If-Match) and the draft.
  editing: null, // { id, base, draft }
};

function fail(err) {
  $('error').textContent = err?.message ?? String(err);
}

// ---- sign-up and sign-in (examples/lib/web/signin.js) -------------------------------------
signInForm(client, {
  appId: 'app',
  onSignedIn: async (me) => {
    state.me = me;
    // the lists I own, and those shared with me through my memberships (the rules decide)
    const [own, memberships] = await Promise.all([
      lists.sort('createdAt').limit(100).list(),
      members.where({ email: state.me.email }).sort('createdAt').limit(100).list(),
    ]);
    for (const list of own.items) state.lists.set(list._id, list);
    for (const m of memberships.items) addShared(m);
    renderLists();
    // One stream for the three collections; after a cut it resumes from the last event seen.
    realtime(client).subscribe([{ collection: 'lists' }, { collection: 'members' }, { collection: 'cards' }], {
      onChange,
      onReset: () => window.location.reload(), // too far behind to resume
      onState: (s) => {
        $('live').textContent = s === 'open' ? 'live' : 'offline';
        $('live').classList.toggle('on', s === 'open');
      },
    }, { maxBackoffMs: 1000 });
  },
});

// ---- lists ------------------------------------------------------------------------------------
/** A list shared with me, as my membership names it. */
function addShared(m) {
  if (m.email !== state.me.email || state.lists.has(m.list)) return;
  state.lists.set(m.list, { _id: m.list, name: m.listName, owner: m.owner });
}

function renderLists() {
  $('lists').replaceChildren(...[...state.lists.values()].map((list) => {
    const li = document.createElement('li');
    li.dataset.id = list._id;
    li.setAttribute('aria-current', String(list._id === state.current));
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = list.name;
    if (list.owner !== state.me._id) {
      const shared = document.createElement('span');
      shared.className = 'shared';
      shared.textContent = '(shared with me)';
      button.append(shared);
    }
    button.addEventListener('click', () => openList(list._id).catch(fail));
    li.append(button);
    return li;
  }));
}

$('list-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = e.target.elements.name;
  try {
    const list = await lists.insert({ name: input.value.trim(), owner: state.me._id });
    state.lists.set(list._id, list);
    input.value = '';
    await openList(list._id);
  } catch (err) {
    fail(err);
  }
});

$('share-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = e.target.elements.email;
  try {
    const list = state.lists.get(state.current);
    await members.insert({ list: list._id, listName: list.name, email: input.value.trim().toLowerCase(), owner: state.me._id });
    input.value = '';
  } catch (err) {
    fail(err);
  }
});

async function openList(id) {
  state.current = id;
  state.editing = null;
  const list = state.lists.get(id);
  $('list-title').textContent = list?.name ?? '';
  $('share-form').hidden = list?.owner !== state.me._id;
  $('columns').hidden = false;
  $('card-form').hidden = false;
  $('trash').hidden = false;
  renderLists();
  // every card of the list, the deleted ones too (for the trash); realtime keeps it current
  const page = await cards.where({ list: id }).withDeleted().sort('position').limit(100).list();
  state.cards = new Map(page.items.map((c) => [c._id, c]));
  renderCards();
}

// ---- cards ------------------------------------------------------------------------------------
const live = (column) => [...state.cards.values()].filter((c) => !c.isDeleted && c.column === column).sort((a, b) => (a.position ?? 0) - (b.position ?? 0));

function renderCards() {
  for (const column of COLUMNS) {
    const ol = document.querySelector(`.column[data-column="${column}"] ol`);
    ol.replaceChildren(...live(column).map((card) => cardItem(card)));
  }
  const trash = [...state.cards.values()].filter((c) => c.isDeleted);
  $('trash').querySelector('ul').replaceChildren(...trash.map((card) => {
    const li = document.createElement('li');
    li.dataset.id = card._id;
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = card.text;
    const restore = button('Restore', `Restore ${card.text}`, () => restoreCard(card));
    li.append(text, ' ', restore);
    return li;
  }));
}

function button(label, aria, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.setAttribute('aria-label', aria);
  b.addEventListener('click', () => onClick().catch(fail));
  return b;
}

function cardItem(card) {
  const li = document.createElement('li');
  li.className = 'card';
  li.dataset.id = card._id;
  if (state.editing?.id === card._id) {
    li.append(editForm(card));
    return li;
  }
  const text = document.createElement('span');
  text.className = 'text';
  text.textContent = card.text;
  const actions = document.createElement('div');
  actions.className = 'actions';
  const at = COLUMNS.indexOf(card.column);
  if (at > 0) actions.append(button('←', `Move ${card.text} to ${NAMES[COLUMNS[at - 1]]}`, () => move(card, COLUMNS[at - 1])));
  if (at < COLUMNS.length - 1) actions.append(button('→', `Move ${card.text} to ${NAMES[COLUMNS[at + 1]]}`, () => move(card, COLUMNS[at + 1])));
  actions.append(button('Edit', `Edit ${card.text}`, async () => startEdit(card)));
  actions.append(button('Delete', `Delete ${card.text}`, () => deleteCard(card)));
  li.append(text, actions);
  return li;
}

// ---- editing a card: If-Match -------------------------------------------------------------------
// The editor keeps the version it opened (`base`). Realtime may bring someone else's change of
// the same card meanwhile; the save then carries that old version in If-Match, and Plinth
// refuses it (412) instead of silently replacing their text: the person is told, and sees theirs.
function startEdit(card) {
  state.editing = { id: card._id, base: card, draft: card.text };
  renderCards();
  document.querySelector(`.card[data-id="${card._id}"] textarea`)?.focus();
}

function editForm(card) {
  const form = document.createElement('form');
  form.className = 'edit';
  const label = document.createElement('label');
  label.textContent = 'Card text ';
  const input = document.createElement('textarea');
  input.name = 'text';
  input.required = true;
  input.maxLength = 500;
  input.value = state.editing.draft;
  input.addEventListener('input', () => { state.editing.draft = input.value; });
  label.append(input);
  const save = document.createElement('button');
  save.type = 'submit';
  save.textContent = 'Save card';
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.textContent = 'Cancel';
  cancel.addEventListener('click', () => {
    state.editing = null;
    renderCards();
  });
  form.append(label, save, ' ', cancel);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    saveEdit(card._id).catch(fail);
  });
  return form;
}

async function saveEdit(id) {
  const { base, draft } = state.editing;
  $('error').textContent = '';
  try {
    const saved = await cards.update(id, { text: draft.trim() }, { ifMatch: base });
    state.cards.set(id, saved);
  } catch (err) {
    if (!(err instanceof PreconditionFailedError) && err?.code !== 'document_not_found') throw err;
    // Someone saved (or deleted) this card after this editor opened: keep theirs, show it, say so.
    const latest = await cards.get(id).catch(() => null);
    if (latest) state.cards.set(id, latest);
    $('error').textContent = latest
      ? `Someone else changed this card while you were editing it; it now reads “${latest.text}”. Your edit was not saved.`
      : 'Someone else deleted this card while you were editing it. Your edit was not saved.';
  }
  state.editing = null;
  renderCards();
}

$('card-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = e.target.elements.text;
  try {
    const last = live('todo').at(-1);
    const card = await cards.insert({ list: state.current, column: 'todo', text: input.value.trim(), position: (last?.position ?? 0) + 1 });
    state.cards.set(card._id, card);
    input.value = '';
    renderCards();
  } catch (err) {
    fail(err);
  }
});

/**
 * A move is one atomic batch: the card goes to the end of its new column, and the cards left
 * behind are numbered again, all or nothing (POST /api/data/batch).
 */
async function move(card, column) {
  const last = live(column).at(-1);
  const operations = [{ op: 'update', collection: 'cards', id: card._id, data: { column, position: (last?.position ?? 0) + 1 } }];
  live(card.column).filter((c) => c._id !== card._id).forEach((c, i) => {
    if (c.position !== i + 1) operations.push({ op: 'update', collection: 'cards', id: c._id, data: { position: i + 1 } });
  });
  const results = await client.batch(operations);
  for (const r of results) state.cards.set(r.id, r.data);
  renderCards();
}

/** Soft delete: the card goes to the trash, whence it can be restored. */
async function deleteCard(card) {
  await cards.delete(card._id);
  state.cards.set(card._id, { ...card, isDeleted: true });
  renderCards();
}

async function restoreCard(card) {
  const restored = await cards.restore(card._id);
  state.cards.set(card._id, restored);
  renderCards();
}

// ---- realtime: what an event changes -------------------------------------------------------------
function onChange({ collection, action, document: doc }) {
  if (!doc) return;
  if (collection === 'members') {
    if (action !== 'delete') addShared(doc);
    renderLists();
    return;
  }
  if (collection === 'lists') {
    if (action === 'delete') state.lists.delete(doc._id);
    else state.lists.set(doc._id, doc);
    renderLists();
    return;
  }
  if (doc.list !== state.current) return;
  state.cards.set(doc._id, action === 'delete' ? { ...doc, isDeleted: true } : doc);
  renderCards();
}

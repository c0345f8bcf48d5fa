/* global document, window */
// The chat example: rooms, messages streamed through realtime, image attachments through
// storage, unread counts from each user's private read markers. All of it through
// @plinth/client (docs/client.md): sessions, documents, counts, realtime that resumes after a
// cut, uploads. No hand-written HTTP.
import { createClient, realtime, files } from '/client.js';
import config from '/config.js';
import { signInForm } from '/lib/signin.js';

const client = createClient({ url: config.baseUrl, apiKey: config.publishableKey }); // the session in localStorage
const list = async (collection, q) => (await q(client.collection(collection)).limit(100).list()).items;
const $ = (id) => document.getElementById(id);

const state = {
  me: null,
  rooms: new Map(), // id → room
  messages: new Map(), // room id → messages, oldest first
  reads: new Map(), // room id → read marker document
  unread: new Map(), // room id → count
  current: null,
};

// ---- sign-up and sign-in (examples/lib/web/signin.js) -------------------------------------
signInForm(client, { appId: 'chat', onSignedIn: start });

async function start(me) {
  state.me = me;
  const [rooms, reads] = await Promise.all([list('rooms', (c) => c.sort('createdAt')), list('reads', (c) => c)]);
  for (const r of reads) state.reads.set(r.room, r);
  for (const room of rooms) state.rooms.set(room._id, room);
  await Promise.all(rooms.map(countUnread));
  renderRooms();
  realtime(client).subscribe([{ collection: 'rooms' }, { collection: 'messages' }], {
    onChange: (e) => (e.action === 'create' ? onCreate(e) : e.action === 'delete' ? onDelete(e) : undefined),
    onReset: () => window.location.reload(), // too far behind to resume
    onState: (s) => {
      $('live').textContent = s === 'open' ? 'live' : 'offline';
      $('live').classList.toggle('on', s === 'open');
    },
  }, { maxBackoffMs: 1000 });
}

// ---- unread counts: messages by others since my read marker ------------------------------
async function countUnread(room) {
  const since = state.reads.get(room._id)?.lastReadAt;
  const filter = { room: room._id, author_ne: state.me._id, ...(since ? { createdAt_gt: since } : {}) };
  state.unread.set(room._id, await client.collection('messages').where(filter).count());
}

async function markRead(roomId) {
  const latest = state.messages.get(roomId)?.at(-1);
  if (!latest) return;
  const marker = state.reads.get(roomId);
  if (marker && marker.lastReadAt >= latest.createdAt) return;
  const reads = client.collection('reads');
  const next = marker ? await reads.update(marker._id, { lastReadAt: latest.createdAt }) : await reads.insert({ room: roomId, lastReadAt: latest.createdAt });
  state.reads.set(roomId, next);
}

// ---- rooms ----------------------------------------------------------------------------------
function renderRooms() {
  const list = $('rooms');
  list.replaceChildren(...[...state.rooms.values()].map((room) => {
    const li = document.createElement('li');
    li.dataset.room = room._id;
    li.setAttribute('aria-current', String(room._id === state.current));
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = room.name;
    button.title = room.name;
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.setAttribute('aria-label', 'unread messages');
    const n = state.unread.get(room._id) ?? 0;
    badge.textContent = n > 0 && room._id !== state.current ? String(n) : '';
    button.append(badge);
    button.addEventListener('click', () => openRoom(room._id));
    li.append(button);
    return li;
  }));
}

$('room-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = e.target.elements.name;
  try {
    const room = await client.collection('rooms').insert({ name: input.value.trim() });
    state.rooms.set(room._id, room);
    input.value = '';
    await openRoom(room._id);
  } catch (err) {
    $('chat-error').textContent = err.message;
  }
});

async function openRoom(roomId) {
  state.current = roomId;
  $('room-title').textContent = state.rooms.get(roomId)?.name ?? '';
  $('message-form').hidden = false;
  // Messages that arrive through realtime while the room loads are kept and merged, not lost:
  // the list below may have been read before they were written.
  if (!state.messages.has(roomId)) state.messages.set(roomId, []);
  const fetched = await list('messages', (c) => c.where({ room: roomId }).sort('createdAt'));
  const byId = new Map([...fetched, ...state.messages.get(roomId)].map((m) => [m._id, m]));
  state.messages.set(roomId, [...byId.values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)));
  state.unread.set(roomId, 0);
  renderMessages();
  renderRooms();
  await markRead(roomId);
}

// ---- messages ---------------------------------------------------------------------------------
function renderMessages() {
  const list = $('messages');
  list.replaceChildren(...(state.messages.get(state.current) ?? []).map((m) => {
    const li = document.createElement('li');
    li.dataset.id = m._id;
    const who = document.createElement('span');
    who.className = 'author';
    who.textContent = m.authorName || 'someone';
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = m.text ?? '';
    li.append(who, text);
    if (m.image) {
      const img = document.createElement('img');
      img.src = m.image;
      img.alt = `image from ${m.authorName || 'someone'}`;
      li.append(img);
    }
    return li;
  }));
}

$('message-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.target;
  const text = form.elements.text.value.trim();
  const file = form.elements.image.files[0];
  if (!text && !file) return;
  $('chat-error').textContent = '';
  try {
    const image = file ? (await files(client).upload(file)).url : undefined;
    await client.collection('messages').insert({ room: state.current, text, authorName: state.me.name || state.me.email, ...(image ? { image } : {}) });
    form.reset();
  } catch (err) {
    $('chat-error').textContent = err.message;
  }
});

// ---- realtime: what an event changes -------------------------------------------------------------
function onCreate({ collection, document: doc }) {
  if (!doc) return;
  if (collection === 'rooms') {
    state.rooms.set(doc._id, doc);
    renderRooms();
    return;
  }
  const list = state.messages.get(doc.room);
  if (list && !list.some((m) => m._id === doc._id)) list.push(doc);
  if (doc.room === state.current) {
    renderMessages();
    markRead(doc.room).catch(() => {});
  } else if (doc.author !== state.me._id) {
    state.unread.set(doc.room, (state.unread.get(doc.room) ?? 0) + 1);
    renderRooms();
  }
}

// A message deleted (by its author, or by the project's nightly clean-up of messages older than
// 30 days: examples/chat/setup.ts) leaves every open chat at once.
function onDelete({ collection, id }) {
  if (collection !== 'messages') return;
  for (const [roomId, list] of state.messages) {
    const at = list.findIndex((m) => m._id === id);
    if (at === -1) continue;
    list.splice(at, 1);
    if (roomId === state.current) renderMessages();
  }
}

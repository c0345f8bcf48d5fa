/* global document */
// The blog example: posts with a long Markdown body and a cover image, drafts only their author
// reads (the collection's access rules), comments only their author edits (row-level
// security), full-text search, comment counts per post (aggregate) and cursor pages. All of it
// through @plinth/client (docs/client.md): sessions, documents, search, cursor pages, the
// aggregate, the cover upload. No hand-written HTTP. Subscribers are mailed by the project's
// after-hook when a post is published (examples/blog/setup.ts): the page only adds or removes
// the reader's subscription.
import { createClient, files } from '/client.js';
import config from '/config.js';
import { signInForm } from '/lib/signin.js';
import { renderMarkdown } from './markdown.js';

const client = createClient({ url: config.baseUrl, apiKey: config.publishableKey }); // the session in localStorage
const posts = client.collection('posts');
const comments = client.collection('comments');
const subscribers = client.collection('subscribers');
const $ = (id) => document.getElementById(id);
const PAGE = 10;
const LIST_FIELDS = ['title', 'cover', 'published', 'author', 'authorName'];

const state = { me: null, cursor: null, search: '', current: null, subscription: null };

function fail(err) {
  $('blog-error').textContent = err?.message ?? String(err);
}

// ---- sign-up and sign-in (examples/lib/web/signin.js) -------------------------------------
signInForm(client, {
  appId: 'blog',
  onSignedIn: async (me) => {
    state.me = me;
    await Promise.all([showList(), loadSubscription()]);
  },
});

// ---- mail on new posts: the reader's own row in `subscribers` (the rules admit no other) ------
async function loadSubscription() {
  const [row] = (await subscribers.limit(1).list()).items;
  state.subscription = row ?? null;
  showSubscription();
}

function showSubscription() {
  $('subscribe').textContent = state.subscription ? 'Unsubscribe' : 'Subscribe';
  $('subscription').textContent = state.subscription ? `New posts are mailed to ${state.subscription.email}` : 'Get new posts by mail';
}

$('subscribe').addEventListener('click', async () => {
  $('blog-error').textContent = '';
  try {
    if (state.subscription) {
      await subscribers.delete(state.subscription._id);
      state.subscription = null;
    } else {
      state.subscription = await subscribers.insert({ email: state.me.email, user: state.me._id });
    }
    showSubscription();
  } catch (err) {
    fail(err);
  }
});

// ---- the list: cursor pages, or search results; comment counts by aggregate ---------------
async function showList(search = '') {
  state.search = search;
  state.cursor = null;
  state.current = null;
  $('post').hidden = true;
  $('post-form').hidden = true;
  $('list-title').textContent = search ? `Posts matching “${search}”` : 'Posts';
  $('posts').replaceChildren();
  await loadPage();
}

async function loadPage() {
  $('blog-error').textContent = '';
  try {
    let items;
    if (state.search) {
      // full-text search over title and body, most relevant first
      items = (await posts.search(state.search).select(...LIST_FIELDS).limit(50).list()).items;
      state.cursor = null;
    } else {
      // keyset pages, newest first: `after('')` for the first page, then its `nextCursor`
      const page = await posts.sort('-createdAt').limit(PAGE).select(...LIST_FIELDS).after(state.cursor ?? '').list();
      items = page.items;
      state.cursor = page.nextCursor ?? null;
    }
    const counts = await commentCounts(items.map((p) => p._id));
    $('posts').append(...items.map((p) => postItem(p, counts.get(p._id) ?? 0)));
    $('more').hidden = !state.cursor;
  } catch (err) {
    fail(err);
  }
}

/** Comments per post, one aggregate call for the page (grouped by post, of the page's posts). */
async function commentCounts(ids) {
  const counts = new Map();
  if (ids.length === 0) return counts;
  const { groups } = await comments.where('post', 'in', ids).aggregate({ groupBy: ['post'], count: true, limit: ids.length });
  for (const g of groups) counts.set(g.key.post, g.count);
  return counts;
}

function postItem(post, comments) {
  const li = document.createElement('li');
  li.dataset.id = post._id;
  if (post.cover) {
    const img = document.createElement('img');
    img.src = post.cover;
    img.alt = '';
    li.append(img);
  }
  const open = document.createElement('button');
  open.type = 'button';
  open.className = 'open';
  open.textContent = post.title;
  open.addEventListener('click', () => openPost(post._id).catch(fail));
  const by = document.createElement('span');
  by.className = 'meta';
  by.textContent = `by ${post.authorName || 'someone'}`;
  li.append(open, by);
  if (post.published !== true) {
    const draft = document.createElement('span');
    draft.className = 'pill';
    draft.textContent = 'draft';
    li.append(draft);
  }
  const count = document.createElement('span');
  count.className = 'count';
  count.textContent = `${comments} comment${comments === 1 ? '' : 's'}`;
  li.append(count);
  return li;
}

$('more').addEventListener('click', () => loadPage());
$('search-form').addEventListener('submit', (e) => {
  e.preventDefault();
  showList(e.target.elements.q.value.trim()).catch(fail);
});
$('clear-search').addEventListener('click', () => {
  $('search-form').elements.q.value = '';
  showList().catch(fail);
});
$('back').addEventListener('click', () => showList(state.search).catch(fail));

// ---- writing a post: the cover through storage, then the document ------------------------------
$('new-post').addEventListener('click', () => {
  $('post').hidden = true;
  $('post-form').hidden = false;
  $('post-form').elements.title.focus();
});
$('cancel-post').addEventListener('click', () => {
  $('post-form').reset();
  $('post-form').hidden = true;
});
$('post-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.target;
  $('blog-error').textContent = '';
  try {
    const file = form.elements.cover.files[0];
    const cover = file ? (await files(client).upload(file)).url : undefined;
    const post = await posts.insert({
      title: form.elements.title.value.trim(),
      body: form.elements.body.value,
      published: form.elements.published.checked,
      // the access rules refuse a post whose author is not the caller
      author: state.me._id,
      authorName: state.me.name || state.me.email,
      ...(cover ? { cover } : {}),
    });
    form.reset();
    form.hidden = true;
    await openPost(post._id);
  } catch (err) {
    fail(err);
  }
});

// ---- reading a post and its comments ----------------------------------------------------------
async function openPost(id) {
  const post = await posts.get(id);
  state.current = post;
  $('posts').replaceChildren();
  $('more').hidden = true;
  $('post-form').hidden = true;
  $('post').hidden = false;
  $('post-title').textContent = post.title;
  $('post-slug').textContent = post.slug ? `/${post.slug}` : '';
  $('post-author').textContent = `by ${post.authorName || 'someone'}`;
  $('post-draft').hidden = post.published === true;
  $('post-cover').hidden = !post.cover;
  if (post.cover) $('post-cover').src = post.cover;
  $('post-body').replaceChildren(...renderMarkdown(post.body ?? ''));
  await loadComments();
}

async function loadComments() {
  const { items } = await comments.where({ post: state.current._id }).sort('createdAt').limit(100).list();
  $('comments').replaceChildren(...items.map(commentItem));
}

function commentItem(c) {
  const li = document.createElement('li');
  li.dataset.id = c._id;
  const who = document.createElement('span');
  who.className = 'author';
  who.textContent = c.authorName || 'someone';
  const text = document.createElement('span');
  text.className = 'text';
  text.textContent = c.text;
  li.append(who, text);
  if (c.author === state.me._id) {
    // only the author edits: the others get no button, and Plinth refuses them anyway
    const edit = document.createElement('button');
    edit.type = 'button';
    edit.textContent = 'Edit';
    edit.setAttribute('aria-label', 'Edit comment');
    edit.addEventListener('click', () => editComment(li, c));
    li.append(' ', edit);
  }
  return li;
}

function editComment(li, c) {
  const form = document.createElement('form');
  const label = document.createElement('label');
  label.textContent = 'Edit comment ';
  const input = document.createElement('textarea');
  input.name = 'text';
  input.value = c.text;
  label.append(input);
  const save = document.createElement('button');
  save.type = 'submit';
  save.textContent = 'Save comment';
  form.append(label, save);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const next = await comments.update(c._id, { text: input.value.trim() });
      li.replaceWith(commentItem({ ...c, ...next }));
    } catch (err) {
      fail(err);
    }
  });
  li.replaceChildren(form);
  input.focus();
}

$('comment-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.target;
  try {
    await comments.insert({ post: state.current._id, text: form.elements.text.value.trim(), authorName: state.me.name || state.me.email });
    form.reset();
    await loadComments();
  } catch (err) {
    fail(err);
  }
});

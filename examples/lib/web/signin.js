/* global document, FormData */
// The examples' sign-up and sign-in (served as /lib/signin.js beside each app's files): the
// form in the page's `#signin` section, and the app's @plinth/client (`signUp`, which signs in,
// or `signIn`, then `me`). Once signed in, the section gives way to the app's own (`appId`),
// `#me` names the person, and `onSignedIn(me)` starts the app; anything that fails on the way
// is shown under the form.

const FORM = `
  <form id="auth-form">
    <label>Name <input name="name" autocomplete="nickname"></label>
    <label>Email <input name="email" type="email" required autocomplete="email"></label>
    <label>Password <input name="password" type="password" required minlength="8" autocomplete="current-password"></label>
    <div class="row">
      <button type="submit" name="mode" value="signup">Sign up</button>
      <button type="submit" name="mode" value="signin">Sign in</button>
    </div>
    <p id="auth-error" role="alert"></p>
  </form>`;

export function signInForm(client, { appId, onSignedIn }) {
  const $ = (id) => document.getElementById(id);
  $('signin').insertAdjacentHTML('beforeend', FORM);
  $('auth-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const form = new FormData(e.target);
    const email = String(form.get('email'));
    const password = String(form.get('password'));
    $('auth-error').textContent = '';
    try {
      const signUp = e.submitter?.value === 'signup';
      if (signUp) await client.auth.signUp({ email, password, name: String(form.get('name') || email) });
      else await client.auth.signIn({ email, password });
      const me = await client.auth.me();
      $('signin').hidden = true;
      $(appId).hidden = false;
      $('me').textContent = me.name || me.email;
      await onSignedIn(me);
    } catch (err) {
      $('auth-error').textContent = err.message;
    }
  });
}

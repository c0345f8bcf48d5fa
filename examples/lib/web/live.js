/* global document, window, fetch, EventSource, URL, setTimeout */
// The examples' live updates (served as /lib/live.js beside each app's files): a ticket for the
// signed-in user's subscriptions (`POST /api/realtime/ticket`, publishable key and the user's
// token), then the browser's EventSource (docs/realtime.md). After a cut it asks for a new
// ticket and resumes from the last event seen (`lastEventId`); a `reset` (too far behind to
// resume) reloads the page. The page's `#live` pill says whether the stream is up.

export function connectLive(client, config, { subscriptions, actions, onEvent }) {
  let lastEventId = null;
  const setLive = (on) => {
    document.getElementById('live').textContent = on ? 'live' : 'offline';
    document.getElementById('live').classList.toggle('on', on);
  };
  async function connect() {
    try {
      const res = await fetch(`${config.baseUrl}/api/realtime/ticket`, {
        method: 'POST',
        headers: { 'x-api-key': config.publishableKey, authorization: `Bearer ${client.auth.getToken()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subscriptions }),
      });
      const { data } = await res.json();
      const url = new URL(`${config.baseUrl}/api/realtime`);
      url.searchParams.set('ticket', data.ticket);
      if (lastEventId) url.searchParams.set('lastEventId', lastEventId);
      const source = new EventSource(url);
      source.addEventListener('ready', () => setLive(true));
      for (const action of actions) {
        source.addEventListener(action, (e) => {
          lastEventId = e.lastEventId;
          onEvent(JSON.parse(e.data));
        });
      }
      source.addEventListener('reset', () => window.location.reload());
      source.addEventListener('expired', () => {
        source.close();
        setLive(false);
        setTimeout(connect, 1000);
      });
      source.onerror = () => {
        setLive(false);
        if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000); // ticket gone: ask again
      };
    } catch {
      setLive(false);
      setTimeout(connect, 2000); // the network is away: try again
    }
  }
  connect();
}

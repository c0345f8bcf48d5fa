/**
 * Entry of a sandbox process (`dist/sandbox.js`), forked by pool.ts with an empty environment:
 * it holds no secret, no database connection and no listening socket. It runs one invocation at
 * a time per unit instance (several of one project's at once, engine.ts) and asks the parent for
 * everything outside the guest (data, mail, fetch) by message.
 */
import { Engine } from './engine.js';
import { Outbox, unbatch } from './outbox.js';
import type { FromSandbox, InvokeMessage, ToSandbox } from './protocol.js';

const engine = new Engine();
/** Host calls awaiting the parent's answer, by call number, with the invocation that made each. */
const waiting = new Map<number, { id: number; resolve: (body: string) => void }>();
let nextCall = 1;
/** When the resident size was last read: at most every RSS_EVERY_MS (reading it is a system call). */
let rssReadAt = 0;
const RSS_EVERY_MS = 100;

const outbox = new Outbox<FromSandbox>((msg) => process.send?.(msg));
function send(msg: FromSandbox): void {
  outbox.send(msg);
}

async function invoke(msg: InvokeMessage): Promise<void> {
  const outcome = await engine.run(msg, {
    call(name, args) {
      const call = nextCall++;
      return new Promise<string>((resolve) => {
        waiting.set(call, { id: msg.id, resolve });
        send({ t: 'host-call', id: msg.id, call, name, args });
      });
    },
  });
  // Calls still unanswered when the invocation ended are forgotten; other invocations' stay.
  for (const [call, w] of waiting) if (w.id === msg.id) waiting.delete(call);
  if (outcome === 'need-source') send({ t: 'need-source', id: msg.id });
  else {
    // The resident size (read from /proc) after any failure and at most every RSS_EVERY_MS
    // otherwise, when the pool decides whether to replace this process.
    const now = performance.now();
    const fresh = outcome.failure !== undefined || now - rssReadAt >= RSS_EVERY_MS;
    if (fresh) rssReadAt = now;
    const rss = fresh ? process.memoryUsage.rss() : 0;
    send({ t: 'done', id: msg.id, ...outcome, rss });
  }
}

process.on('message', (arrived: unknown) => {
  for (const msg of unbatch<ToSandbox>(arrived)) {
    if (msg.t === 'invoke') void invoke(msg);
    else if (msg.t === 'host-result') {
      const w = waiting.get(msg.call);
      if (!w || w.id !== msg.id) continue;
      waiting.delete(msg.call);
      w.resolve(msg.body);
    }
  }
});
// The parent gone means this process has nothing left to do.
process.on('disconnect', () => process.exit(0));
send({ t: 'ready' });

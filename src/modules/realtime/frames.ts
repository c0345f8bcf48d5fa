/**
 * The bytes of realtime events, built once and shared: a change's SSE frame (`id`, `event`,
 * `data`) is the same for every subscriber who may see it (events never carry hidden fields,
 * docs/rules.md), so it is serialized once per change row, collection name and kind (the change
 * itself, or its `leave`), as a Buffer. A batch of frames that a group of subscribers sees alike
 * (a shape, feed.ts) is joined once, with its HTTP/1.1 chunk header, and the same Buffer is
 * written to each of their sockets: no string, no copy and no chunk header per subscriber.
 */
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { changeJson, leaveJson, positionOf } from './event.js';
import { formatPosition } from './position.js';
import type { ChangeRow } from './queries.js';

interface RowFrames {
  name: string;
  change?: Buffer;
  leave?: Buffer;
}

const frames = new WeakMap<ChangeRow, RowFrames>();

function framesOf(row: ChangeRow, name: string): RowFrames {
  let entry = frames.get(row);
  if (entry === undefined || entry.name !== name) frames.set(row, (entry = { name }));
  return entry;
}

/** `id: <position>\nevent: <action>\ndata: <change>\n\n`, once per row and collection name. */
export function changeFrame(row: ChangeRow, name: string): Buffer {
  const entry = framesOf(row, name);
  return (entry.change ??= Buffer.from(`id: ${formatPosition(positionOf(row))}\nevent: ${row.action}\ndata: ${changeJson(row, name)}\n\n`));
}

/** `id: <position>\nevent: leave\ndata: {collection, id, version}\n\n`, once per row and collection name. */
export function leaveFrame(row: ChangeRow, name: string): Buffer {
  const entry = framesOf(row, name);
  return (entry.leave ??= Buffer.from(`id: ${formatPosition(positionOf(row))}\nevent: leave\ndata: ${leaveJson(row, name)}\n\n`));
}

/** A named event without an id (ready, reset, expired, revoked). */
export function noticeFrame(event: string, data: unknown): Buffer {
  return Buffer.from(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const CRLF = Buffer.from('\r\n');

/**
 * SSE bytes ready for the wire: `payload` is the SSE text (what the client reads), `chunk` the
 * same bytes as one HTTP/1.1 chunk (`<size hex>\r\n…\r\n`), `payload` being a view into it.
 */
export interface Frames {
  payload: Buffer;
  chunk: Buffer;
}

/** Joins SSE frames into one HTTP chunk (one allocation); null for none. */
export function joinFrames(parts: readonly Buffer[]): Frames | null {
  if (parts.length === 0) return null;
  let length = 0;
  for (const p of parts) length += p.length;
  const head = Buffer.from(`${length.toString(16)}\r\n`, 'latin1');
  const chunk = Buffer.concat([head, ...parts, CRLF], head.length + length + 2);
  return { payload: chunk.subarray(head.length, head.length + length), chunk };
}

/** The heartbeat comment, one Buffer for every stream. */
export const HEARTBEAT = joinFrames([Buffer.from(': ping\n\n')])!;

/**
 * Where a stream's bytes go. Once its headers are out, a chunked response on a TCP socket is
 * written straight to the socket with pre-built chunks (what `res.write` would send, without
 * its per-call chunk header, string encoding and cork); any other response (HTTP/1.0, a
 * test's injected request) through `res.write` with the SSE text. The end of the stream
 * (`res.end()`, the last chunk) stays the response's.
 */
export class Wire {
  private socket: Socket | null = null;

  constructor(private readonly res: ServerResponse) {}

  /** Call after the first `res.write` (the headers are out, the response owns its socket). */
  direct(): void {
    const socket = this.res.socket;
    if (this.res.chunkedEncoding && this.res.headersSent && socket instanceof Socket) this.socket = socket;
  }

  write(frames: Frames): void {
    if (this.socket) this.socket.write(frames.chunk);
    else this.res.write(frames.payload);
  }

  /** Bytes accepted but not yet handed to the kernel (the response's and its socket's). */
  get buffered(): number {
    return this.res.writableLength;
  }
}

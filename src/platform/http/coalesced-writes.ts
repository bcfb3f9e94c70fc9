import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Write coalescing for long-lived streams (notification streams, GraphQL subscriptions over graphql-ws and SSE).
 *
 * A write to a socket costs ~10 µs of CPU here, almost all of it the system call (on loopback it includes the
 * reader's TCP processing): at 100 events/s to 1,000 streams that is a whole core before the server does any work of
 * its own, and the backlog then delays every stream by seconds. Fewer writes is the only lever, so a stream socket is
 * written at most once per PERIOD_MS: its first message in a period goes out at once; later ones in the same period
 * are held (the socket is corked) and go out together, in one system call, when the period ends. Nothing waits at
 * low rates (one message per period or fewer); at high rates a message waits at most PERIOD_MS, and the order of a
 * socket's bytes never changes (they are only held, never reordered).
 */
const PERIOD_MS = 25;

/** The period a socket last wrote in. */
const writtenIn = new WeakMap<Socket, number>();
/** Sockets corked until the end of the current period. */
const held = new Set<Socket>();
let flushTimer: NodeJS.Timeout | undefined;
/** The period whose start the flush timer is set for. */
let flushPeriod = 0;

const periodNow = () => Math.floor(performance.now() / PERIOD_MS);

/** Call before writing one message of a stream to `socket` (whatever writes it: res.write, ws.send, …). */
export function beforeStreamWrite(socket: Socket): void {
  const period = periodNow();
  if (writtenIn.get(socket) !== period) {
    writtenIn.set(socket, period);
    return;
  }
  if (held.has(socket) || socket.destroyed) return;
  socket.cork();
  held.add(socket);
  // One timer for all held sockets, at the end of the period; it does not keep the process alive.
  if (!flushTimer) {
    flushPeriod = period + 1;
    flushTimer = setTimeout(flush, PERIOD_MS - (performance.now() % PERIOD_MS)).unref();
  }
}

/** Writes bytes already framed for the stream to its socket, as one coalesced stream write. */
export function writeStreamBytes(socket: Socket, bytes: Buffer): void {
  beforeStreamWrite(socket);
  socket.write(bytes);
}

function flush(): void {
  flushTimer = undefined;
  // What is written now is the new period's write for that socket (timers round to whole milliseconds: the flush
  // may run a little before the period starts).
  const period = Math.max(flushPeriod, periodNow());
  for (const socket of held) {
    writtenIn.set(socket, period);
    socket.uncork();
  }
  held.clear();
}

/** Makes every res.write of a streamed HTTP response (chunked notifications, SSE) a coalesced stream write. */
export function coalesceResponseWrites(res: ServerResponse): void {
  const write = res.write;
  res.write = function (this: ServerResponse, ...args: Parameters<ServerResponse["write"]>) {
    if (res.socket) beforeStreamWrite(res.socket);
    return write.apply(this, args as never);
  } as ServerResponse["write"];
}

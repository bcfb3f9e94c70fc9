import net from "node:net";
import { WebSocket } from "ws";
import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, NotFoundError, UnavailableError, UpstreamError } from "../../platform/core/errors.js";
import { computeTarget, computeUrl } from "../computes/client.js";
import { LOCAL_ID } from "../computes/model.js";

/**
 * One client's connection to one node's telnet console, whatever carries it: a TCP connection of its own to the
 * console port when the node runs on this instance's compute, or — for a node on a remote compute — a WebSocket
 * to that compute's `/v2/compute/projects/{p}/{type}/nodes/{n}/console/ws`, as GNS3's controller relays it. The
 * bytes are the console's own (raw telnet, negotiation included): nothing here reads or rewrites them.
 *
 * Flow control both ways: `send` answers false when the console has not taken what it was given (the caller stops
 * reading its client until `drain`), and `pause`/`resume` stop and restart the console's output while the client
 * is slow, so neither side's backlog is buffered here without bound.
 */
export interface ConsoleLink {
  /** Output of the console, in the order it came; `binary` is false only for a text frame relayed from a compute. */
  onOutput(listener: (chunk: Buffer, binary: boolean) => void): void;
  /** Once, when the console side ended (the node stopped, its console closed, the compute went away). */
  onEnd(listener: () => void): void;
  /** Client input: a text frame's UTF-8 bytes (`binary` false) or a binary frame. False: wait for `onDrain`. */
  send(data: Buffer, binary: boolean): boolean;
  onDrain(listener: () => void): void;
  /** Input bytes given to `send` that the console has not taken yet. */
  pendingInput(): number;
  pause(): void;
  resume(): void;
  close(): void;
}

const CONNECT_TIMEOUT_MS = 5_000;
/** Input queued for a remote compute's socket beyond which the client is paused until it drains. */
const RELAY_HIGH_WATER = 256 * 1024;

/** Where this host reaches a console bound to `host`: a wildcard address is reached on loopback. */
export function reachableConsoleHost(host: string | null | undefined, fallback: string): string {
  const h = host || fallback;
  return h === "0.0.0.0" || h === "::" ? "127.0.0.1" : h;
}

/**
 * The checks of gns3-server's compute (`start_websocket_console`), answered 409 (its NodeError) before any
 * connection: a console that is not telnet, a node that is not running, a node without a console port.
 */
export function assertTelnetConsole(node: Pick<Node, "name" | "consoleType" | "status" | "console">): number {
  if (node.consoleType !== "telnet") throw new ConflictError(`Node ${node.name} console type is not telnet`);
  if (node.status !== "started") throw new ConflictError(`Node ${node.name} is not started`);
  if (node.console == null) throw new ConflictError(`Node ${node.name} has no console port`);
  return node.console;
}

/** A TCP connection of its own to the console of a node this instance's compute runs. */
export function openLocalConsole(ctx: AppContext, node: Node): Promise<ConsoleLink> {
  const port = assertTelnetConsole(node);
  const host = reachableConsoleHost(node.consoleHost, ctx.config.host);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => socket.destroy(new Error("timed out")), CONNECT_TIMEOUT_MS);
    socket.once("error", (e) => {
      clearTimeout(timer);
      reject(new ConflictError(`Cannot connect to node ${node.name} telnet server: ${e.message}`));
    });
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      socket.setNoDelay(true);
      resolve(tcpLink(socket));
    });
  });
}

/** `onEnd` of an emitter's "close": called at once when it closed before anyone asked (during the handshake). */
function endOf(emitter: { once(event: "close", listener: () => void): unknown }) {
  let ended = false;
  const listeners: (() => void)[] = [];
  emitter.once("close", () => {
    ended = true;
    for (const l of listeners.splice(0)) l();
  });
  return (listener: () => void) => (ended ? listener() : void listeners.push(listener));
}

function tcpLink(socket: net.Socket): ConsoleLink {
  socket.on("error", () => socket.destroy()); // a reset console: "close" follows and ends the link
  return {
    // No data is read before a "data" listener is attached: what the console sent meanwhile waits in the socket.
    onOutput: (listener) => void socket.on("data", (chunk: Buffer) => listener(chunk, true)),
    onEnd: endOf(socket),
    send: (data) => (socket.destroyed ? true : socket.write(data)),
    onDrain: (listener) => void socket.on("drain", listener),
    pendingInput: () => socket.writableLength,
    pause: () => void socket.pause(),
    resume: () => void socket.resume(),
    close: () => void socket.destroy(),
  };
}

/** The compute's WebSocket console of a node placed there, with the compute's credentials. */
export async function openRemoteConsole(ctx: AppContext, node: Node): Promise<ConsoleLink> {
  const t = await computeTarget(ctx, node.computeId);
  const route = `/v2/compute/projects/${encodeURIComponent(node.projectId)}/${encodeURIComponent(node.nodeType)}/nodes/${encodeURIComponent(node.id)}/console/ws`;
  const url = computeUrl(t, route).replace(/^http/, "ws");
  const headers: Record<string, string> = {};
  if (t.user) headers.authorization = `Basic ${Buffer.from(`${t.user}:${t.password ?? ""}`).toString("base64")}`;
  // As the placement's notification socket: a compute's certificate is often self-signed.
  const ws = new WebSocket(url, { headers, rejectUnauthorized: false, handshakeTimeout: CONNECT_TIMEOUT_MS, maxPayload: 1024 * 1024 });
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.length < 64 && chunks.push(c));
      res.on("error", () => {});
      res.on("end", () => {
        ws.terminate();
        const text = Buffer.concat(chunks).toString("utf8");
        let message = text;
        try {
          const json = JSON.parse(text);
          if (typeof json?.message === "string") message = json.message;
        } catch {}
        const status = res.statusCode ?? 0;
        // The compute's answer, as the controller's REST forwarding maps it (forwarding.ts).
        if (status === 404) reject(new NotFoundError(message));
        else if (status === 409) reject(new ConflictError(message));
        else if (status === 403) reject(new ForbiddenError(message));
        else if (status >= 500) reject(new UpstreamError(`Internal server error ${computeUrl(t, route)}`));
        else reject(new ConflictError(`Compute '${t.name}' refused the console of ${node.name}: ${status} ${message}`.trim()));
      });
    });
    ws.once("error", (e) => reject(new UnavailableError(`Cannot connect to compute '${t.name}' with request GET ${computeUrl(t, route)}: ${e.message}`)));
    ws.once("open", () => {
      ws.removeAllListeners("error");
      ws.removeAllListeners("unexpected-response");
      // A message is emitted whether anyone listens or not: nothing is read until the output has its reader.
      ws.pause();
      resolve(relayLink(ws));
    });
  });
}

function relayLink(ws: WebSocket): ConsoleLink {
  const drains: (() => void)[] = [];
  ws.on("error", () => ws.terminate());
  const sent = () => {
    if (ws.bufferedAmount <= RELAY_HIGH_WATER) for (const d of drains) d();
  };
  return {
    onOutput(listener) {
      ws.on("message", (data: Buffer, binary: boolean) => listener(data, binary));
      ws.resume();
    },
    onEnd: endOf(ws),
    send(data, binary) {
      if (ws.readyState !== WebSocket.OPEN) return true;
      ws.send(data, { binary }, sent);
      return ws.bufferedAmount <= RELAY_HIGH_WATER;
    },
    onDrain: (listener) => void drains.push(listener),
    pendingInput: () => ws.bufferedAmount,
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    close() {
      if (ws.readyState === WebSocket.CONNECTING) return ws.terminate();
      ws.resume(); // a paused socket would never read the compute's answer to the close
      ws.close(1000);
    },
  };
}

/** The console of a controller node: its own connection on this compute, or the relay of its remote compute. */
export function openNodeConsole(ctx: AppContext, node: Node): Promise<ConsoleLink> {
  return node.computeId === LOCAL_ID ? openLocalConsole(ctx, node) : openRemoteConsole(ctx, node);
}

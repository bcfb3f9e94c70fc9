import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { WebSocket } from "ws";
import type { AppContext } from "../../platform/context.js";
import { writeStreamBytes } from "../../platform/http/coalesced-writes.js";
import { StreamedBody, webSocketTextFrame } from "../../platform/http/stream-frames.js";
import type { Subscription, Topic } from "../../platform/events.js";
import { trackStream } from "../../platform/ops/metrics.js";
import { pythonJsonLine } from "../rest/json.js";
import { allProjectsTopic, channelProjectId, controllerTopic, projectTopic, type EmulationEvent } from "../core/events.js";
import { toGns3Notification } from "./wire.js";
import { systemUsage } from "../computes/system-usage.js";

/**
 * controller: project.*, compute.* …; project: one project's events; compute: the compute's global stream
 * (`/v2/compute/notifications/ws`), every project's events with the project id at top level (compat §11.1).
 */
export type StreamScope = { kind: "controller" } | { kind: "project"; projectId: string } | { kind: "compute" };

/** GNS3 sends a ping first, then again whenever the stream has been silent this long (1 s on a compute). */
const PING_INTERVAL_MS: Record<StreamScope["kind"], number> = { controller: 5000, project: 5000, compute: 1000 };

function scopeTopic(scope: StreamScope): Topic<EmulationEvent> {
  if (scope.kind === "compute") return allProjectsTopic;
  return scope.kind === "controller" ? controllerTopic : projectTopic(scope.projectId);
}

/** The GNS3 wire form, made here at the stream's edge; a compute's stream names each event's project. */
function scopeMessage(ctx: AppContext, scope: StreamScope, channel: string, event: EmulationEvent): NotificationMessage {
  const message = toGns3Notification(ctx, event);
  return new NotificationMessage(pythonJsonLine(scope.kind === "compute" ? { ...message, project_id: channelProjectId(channel) } : message));
}

/**
 * One message as GNS3 serialises it (sorted keys, Python separators), with its wire forms made once for all the
 * streams that send it, written to their sockets as they are.
 */
export class NotificationMessage {
  private line: StreamedBody | undefined;
  private frame: Buffer | undefined;

  constructor(readonly text: string) {}

  /** What the HTTP stream `res` sends: the message and a newline. */
  forResponse(res: ServerResponse): Buffer {
    return (this.line ??= new StreamedBody(Buffer.from(`${this.text}\n`))).for(res);
  }

  /** The message as a WebSocket text frame. */
  webSocketFrame(): Buffer {
    return (this.frame ??= webSocketTextFrame(Buffer.from(this.text)));
  }
}

/**
 * Unsent bytes beyond which a stream's client is taken as gone and disconnected: GNS3 streams have no flow control,
 * and a client that stopped reading would otherwise have the server keep every message for it, without bound.
 */
const UNSENT_LIMIT = 16 * 1024 * 1024;

/** Writes one message's wire form to a stream's socket, or cuts a client that has stopped reading. */
export function writeToStream(ctx: AppContext, socket: Socket, bytes: Buffer): void {
  if (socket.destroyed) return;
  if (socket.writableLength > UNSENT_LIMIT) {
    ctx.log.warn("notification stream cut: the client stopped reading", { unsent: socket.writableLength, remote: socket.remoteAddress });
    socket.destroy();
    return;
  }
  writeStreamBytes(socket, bytes);
}

/** A GNS3 WebSocket stream's send: each message's frame, written on the upgraded request's socket. */
export function webSocketSender(ctx: AppContext, ws: WebSocket, socket: Socket): (message: NotificationMessage) => void {
  return (message) => {
    if (ws.readyState === ws.OPEN) writeToStream(ctx, socket, message.webSocketFrame());
  };
}

/**
 * The streams of one scope (the controller's, one project's, the compute's) share one bus subscription: the fan-out
 * to 1,000 streams is one loop over their sends per event, instead of 1,000 subscriptions each ordering, counting
 * and queueing the same event. A stream joining reads what comes from then on, as its own subscription would.
 */
class StreamHub {
  private readonly streams = new Set<(message: NotificationMessage) => void>();
  private readonly subscription: Subscription<EmulationEvent>;

  constructor(ctx: AppContext, scope: StreamScope, onEnd: () => void) {
    const subscription = (this.subscription = ctx.bus.subscribe(scopeTopic(scope)));
    void (async () => {
      try {
        for await (const e of subscription) {
          const message = scopeMessage(ctx, scope, e.channel, e.data);
          for (const send of this.streams) send(message);
        }
      } catch (error) {
        ctx.log.error("notification stream", { error });
      } finally {
        onEnd();
      }
    })();
  }

  join(send: (message: NotificationMessage) => void): void {
    this.streams.add(send);
  }

  leave(send: (message: NotificationMessage) => void): void {
    this.streams.delete(send);
    if (this.streams.size === 0) void this.subscription.return();
  }
}

/** The hubs of each server, found through its bus (every copy of a server's context shares it). */
const hubsByBus = new WeakMap<object, Map<string, StreamHub>>();

function joinHub(ctx: AppContext, scope: StreamScope, send: (message: NotificationMessage) => void): StreamHub {
  let hubs = hubsByBus.get(ctx.bus);
  if (!hubs) hubsByBus.set(ctx.bus, (hubs = new Map()));
  const key = scope.kind === "project" ? `project:${scope.projectId}` : scope.kind;
  let hub = hubs.get(key);
  if (!hub) {
    const created: StreamHub = new StreamHub(ctx, scope, () => hubs.get(key) === created && hubs.delete(key));
    hubs.set(key, (hub = created));
  }
  hub.join(send);
  return hub;
}

/**
 * One GNS3 notification stream, whatever the transport: `send` gets each message. Returns the function that ends
 * the stream.
 */
export function openNotificationStream(ctx: AppContext, scope: StreamScope, send: (message: NotificationMessage) => void): () => void {
  const untrack = trackStream(ctx, `gns3:${scope.kind}`);
  const pingInterval = PING_INTERVAL_MS[scope.kind];
  let open = true;
  let lastSent = -Infinity;
  const emit = (message: NotificationMessage) => {
    if (!open) return;
    send(message);
    lastSent = performance.now();
  };
  // A ping once the stream has been silent for the interval; the timer checks the last send instead of being
  // re-armed on every message (at 100 events/s to 1,000 streams, re-arming was a measurable share of the fan-out).
  let timer: NodeJS.Timeout;
  const pingWhenSilent = () => {
    const silent = performance.now() - lastSent;
    if (silent >= pingInterval) emit(new NotificationMessage(pythonJsonLine({ action: "ping", event: systemUsage() })));
    timer = setTimeout(pingWhenSilent, silent >= pingInterval ? pingInterval : pingInterval - silent);
  };
  pingWhenSilent();
  const hub = joinHub(ctx, scope, emit);
  return () => {
    if (!open) return;
    untrack();
    open = false;
    clearTimeout(timer);
    hub.leave(emit);
  };
}

import type { AppContext } from "../../platform/context.js";
import type { Topic } from "../../platform/events.js";
import { trackStream } from "../../platform/ops/metrics.js";
import { pythonJsonLine } from "../rest/json.js";
import { allProjectsTopic, channelProjectId, controllerTopic, projectTopic, type EmulationEvent } from "../events.js";
import { toGns3Notification } from "./wire.js";
import { systemUsage } from "./usage.js";

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

/**
 * The GNS3 wire form, made here at the stream's edge; a compute's stream names each event's project. Every stream
 * of one kind sends the same line for one event, and the bus hands all its subscribers the same event object: the
 * line is made once per event and kind, not once per listener (held only as long as the event is).
 */
const lines: Record<StreamScope["kind"], WeakMap<object, string>> = { controller: new WeakMap(), project: new WeakMap(), compute: new WeakMap() };

function scopeLine(ctx: AppContext, scope: StreamScope, channel: string, event: EmulationEvent): string {
  let line = lines[scope.kind].get(event);
  if (line === undefined) {
    const message = toGns3Notification(ctx, event);
    line = pythonJsonLine(scope.kind === "compute" ? { ...message, project_id: channelProjectId(channel) } : message);
    lines[scope.kind].set(event, line);
  }
  return line;
}

/**
 * One GNS3 notification stream, whatever the transport: `send` gets each message as GNS3 serialises it
 * (sorted keys, Python separators). Returns the function that ends the stream.
 */
export function openNotificationStream(ctx: AppContext, scope: StreamScope, send: (message: string) => void): () => void {
  const subscription = ctx.bus.subscribe(scopeTopic(scope));
  const untrack = trackStream(ctx, `gns3:${scope.kind}`);
  const pingInterval = PING_INTERVAL_MS[scope.kind];
  let open = true;
  const ping = () => emit(pythonJsonLine({ action: "ping", event: systemUsage() }));
  // Re-armed on every message (refresh, not a new timer per message: at 100 events/s to 1,000 streams, timers
  // were a measurable share of the fan-out).
  const timer = setTimeout(ping, pingInterval);
  const emit = (line: string) => {
    if (!open) return;
    send(line);
    timer.refresh();
  };
  ping();
  void (async () => {
    for await (const e of subscription) emit(scopeLine(ctx, scope, e.channel, e.data));
  })();
  return () => {
    untrack();
    open = false;
    clearTimeout(timer);
    void subscription.return();
  };
}

import type { AppContext } from "../../platform/context.js";
import { pythonJsonLine } from "../rest/json.js";
import { CONTROLLER_CHANNEL, projectChannel } from "../events.js";
import { systemUsage } from "./usage.js";

/** GNS3 sends a ping first, then again whenever the stream has been silent this long. */
const PING_INTERVAL_MS = 5000;

export type StreamScope = { kind: "controller" } | { kind: "project"; projectId: string };

const scopeChannel = (scope: StreamScope) => (scope.kind === "controller" ? CONTROLLER_CHANNEL : projectChannel(scope.projectId));

/**
 * One GNS3 notification stream, whatever the transport: `send` gets each message as GNS3 serialises it
 * (sorted keys, Python separators). Returns the function that ends the stream.
 */
export function openNotificationStream(ctx: AppContext, scope: StreamScope, send: (message: string) => void): () => void {
  const channel = scopeChannel(scope);
  const subscription = ctx.bus.subscribe((c) => c === channel);
  let timer: NodeJS.Timeout | undefined;
  let open = true;
  const emit = (message: object) => {
    if (!open) return;
    send(pythonJsonLine(message));
    clearTimeout(timer);
    timer = setTimeout(() => emit({ action: "ping", event: systemUsage() }), PING_INTERVAL_MS);
  };
  emit({ action: "ping", event: systemUsage() });
  void (async () => {
    for await (const e of subscription) emit(e.data as object);
  })();
  return () => {
    open = false;
    clearTimeout(timer);
    void subscription.return();
  };
}

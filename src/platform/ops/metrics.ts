import type { NextFunction, Request, Response } from "express";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { AppContext } from "../context.js";
import type { EventBus, Subscription } from "../events.js";

/**
 * Prometheus metrics of one server (GET /metrics). Each server has its own registry (tests run several in one
 * process); the process metrics (CPU, memory, event loop, GC) are per process and registered once.
 * Recording is a label lookup and an add: cheap enough for every request and query.
 */
export interface Metrics {
  registry: Registry;
  /** Request duration per route template, method and status (its `_count` is the request count). */
  http: Histogram<"method" | "route" | "status">;
  /** Prisma operation duration per model and operation (what the application waits for, queueing included). */
  db: Histogram<"model" | "operation">;
  busPublished: Counter<"channel">;
  busDelivered: Counter<"channel">;
  /** Open notification streams and GraphQL subscriptions per kind. */
  streams: Gauge<"kind">;
}

declare module "../context.js" {
  interface FeatureServices {
    /** Set by the composition root before the features start. */
    ops: { metrics: Metrics };
  }
}

let processRegistry: Registry | undefined;

export function createMetrics(runningNodes: () => Record<string, number>, busSubscribers: () => number): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    http: new Histogram({
      name: "patchbay_http_request_duration_seconds",
      help: "HTTP requests by route template, method and status (streams count until they end)",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    db: new Histogram({
      name: "patchbay_db_query_duration_seconds",
      help: "Database operations by model and operation",
      labelNames: ["model", "operation"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
    busPublished: new Counter({ name: "patchbay_event_bus_published_total", help: "Events published by this instance, by channel kind", labelNames: ["channel"], registers }),
    busDelivered: new Counter({ name: "patchbay_event_bus_delivered_total", help: "Events handed to subscribers of this instance, by channel kind", labelNames: ["channel"], registers }),
    streams: new Gauge({ name: "patchbay_open_streams", help: "Open notification streams and GraphQL subscriptions, by kind", labelNames: ["kind"], registers }),
  };
  new Gauge({
    name: "patchbay_event_bus_subscribers",
    help: "Open event bus subscriptions on this instance",
    registers,
    collect() {
      this.set(busSubscribers());
    },
  });
  new Gauge({
    name: "patchbay_running_nodes",
    help: "Nodes running on the local compute, by node type",
    labelNames: ["type"],
    registers,
    collect() {
      this.reset();
      for (const [type, n] of Object.entries(runningNodes())) this.set({ type }, n);
    },
  });
  return metrics;
}

/** The text exposition: this server's metrics, then the process's. */
export async function renderMetrics(metrics: Metrics): Promise<string> {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return (await metrics.registry.metrics()) + (await processRegistry.metrics());
}

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The route template of a request: `/v2/projects/:project_id/nodes`, never the concrete path (bounded labels). */
function routeOf(req: Request): string {
  const route = req.route as { path?: unknown } | undefined;
  if (typeof route?.path === "string") return req.baseUrl + route.path;
  return req.baseUrl || "unmatched"; // a mounted handler (GraphQL, static assets) or no route at all
}

/** First middleware: times every request (401s and 404s included) until it finishes or the client leaves. */
export function requestMetrics(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const done = () => {
      res.off("finish", done);
      res.off("close", done);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.http.observe({ method: req.method, route: routeOf(req), status: String(res.statusCode) }, seconds);
    };
    res.on("finish", done);
    res.on("close", done);
    next();
  };
}

/** "emulation:project:<id>" → "emulation:project": the channel's kind, a bounded label. */
const channelKind = (channel: string) => channel.split(":", 2).join(":");

/** The bus with publish and delivery counters (wrapped at the composition root; the bus itself stays unaware). */
export function countedBus(bus: EventBus, metrics: Metrics): EventBus {
  const subscribe = bus.subscribe.bind(bus) as unknown as (topic: unknown, opts?: unknown) => Subscription;
  const publish = bus.publish.bind(bus) as unknown as (channel: string, data: unknown) => ReturnType<EventBus["publish"]>;
  return {
    lastId: () => bus.lastId(),
    publish: ((channel: string, data: unknown) => {
      metrics.busPublished.inc({ channel: channelKind(channel) });
      return publish(channel, data);
    }) as EventBus["publish"],
    subscribe: ((topic: unknown, opts?: unknown) => {
      const sub = subscribe(topic, opts);
      const push = sub.push.bind(sub);
      sub.push = (event) => {
        metrics.busDelivered.inc({ channel: channelKind(event.channel) });
        push(event);
      };
      return sub;
    }) as EventBus["subscribe"],
    subscriberCount: () => bus.subscriberCount(),
    close: () => bus.close(),
  };
}

/**
 * Counts an open stream of `kind` (e.g. "gns3:project", "graphql:projectEvents") until the returned function
 * is called (calling it again does nothing).
 */
export function trackStream(ctx: Pick<AppContext, "services">, kind: string): () => void {
  const gauge = ctx.services.ops?.metrics.streams;
  gauge?.inc({ kind });
  let open = true;
  return () => {
    if (open) gauge?.dec({ kind });
    open = false;
  };
}

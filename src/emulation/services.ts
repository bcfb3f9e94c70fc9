import type { AppContext } from "../platform/context.js";
import { KeyedQueue } from "../platform/keyed-queue.js";
import { ComputeMonitor } from "./computes/monitor.js";
import { Placement } from "./computes/placement.js";
import { ProjectListeners } from "./notifications/listeners.js";
import { createListenerTally } from "./notifications/listener-tally.js";
import type { ReadViews } from "../platform/read-views.js";
import { projectReadViews } from "./read-model/views.js";
import { LocalCompute } from "./runtime/manager.js";
import { removeInterruptedUploads } from "./images/store.js";
import { removeInterruptedStaging } from "./projects/staging.js";

/** What the emulation feature runs for one server, reached by operations as `ctx.services.emulation`. */
export interface EmulationServices {
  /** The local compute: vpcs processes, hubs and switches, link relays, captures, UDP ports. */
  runtime: LocalCompute;
  /** Nodes on remote computes, and the remote ends of links the runtime relays. */
  placement: Placement;
  /** The live connection state of every registered remote compute. */
  computes: ComputeMonitor;
  /** Notification listeners per project (GNS3's auto_close). */
  listeners: ProjectListeners;
  /** Read-modify-writes of one stored settings document run one at a time (server/store.ts). */
  settingWrites: KeyedQueue;
  /** The project read views (nodes and links lists), dropped by every change. */
  reads: ReadViews;
}

declare module "../platform/context.js" {
  interface FeatureServices {
    emulation: EmulationServices;
  }
}

/**
 * Builds and starts the services, dependencies first. The placement follows compute.updated before the monitor
 * publishes any, and is the runtime's remote end before the runtime's crash recovery rewires links.
 */
export async function startEmulationServices(ctx: AppContext): Promise<EmulationServices> {
  // What a killed server left half-written, removed before a client can start a new upload or import.
  const interrupted = [...(await removeInterruptedUploads(ctx)), ...(await removeInterruptedStaging(ctx))];
  if (interrupted.length) ctx.log.info("removed interrupted uploads and imports", { paths: interrupted });
  const runtime = new LocalCompute(ctx);
  const computes = new ComputeMonitor(ctx);
  const placement = new Placement(ctx, runtime, computes);
  runtime.remoteEnd = (projectId, node, adapter, port) => placement.remoteEnd(projectId, node, adapter, port);
  placement.start();
  try {
    await runtime.start();
  } catch (e) {
    // Nothing half-started stays behind (the server stops only features whose start() returned).
    await placement.stop();
    await runtime.stop();
    throw e;
  }
  computes.start();
  const reads = projectReadViews(ctx);
  return { runtime, placement, computes, listeners: new ProjectListeners(ctx, await createListenerTally(ctx)), settingWrites: new KeyedQueue(), reads };
}

/** Stops them in reverse order: no auto_close after this, no polling, then every process, relay and device. */
export async function stopEmulationServices({ runtime, placement, computes, listeners, reads }: EmulationServices): Promise<void> {
  await listeners.stop();
  await reads.stop();
  await computes.stop();
  await placement.stop();
  await runtime.stop();
}

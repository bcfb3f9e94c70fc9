import type { AppContext } from "../platform/context.js";
import { KeyedQueue } from "../platform/keyed-queue.js";
import { ComputeMonitor } from "./computes/monitor.js";
import { Placement } from "./remote-compute/placement.js";
import { ProjectListeners } from "./notifications/listeners.js";
import { createListenerTally } from "./notifications/listener-tally.js";
import type { ReadViews } from "../platform/read-views.js";
import { projectReadViews } from "./read-model/views.js";
import { LocalCompute } from "./runtime/local/manager.js";
import { openCommandChannel } from "./instances/commands.js";
import { startPresence } from "./instances/presence.js";
import { ProjectRunners } from "./instances/runners.js";
import { removeInterruptedUploads } from "./images/store.js";
import { removeInterruptedStaging } from "./projects/staging.js";
import { stopOrphanCaptures } from "./links/capture.js";
import { setNodeRuntimeState } from "./nodes/operations.js";

/** What the emulation feature runs for one server, reached by operations as `ctx.services.emulation`. */
export interface EmulationServices {
  /** The local compute: vpcs processes, hubs and switches, link relays, captures, UDP ports. */
  runtime: LocalCompute;
  /** Which instance runs each open project; actions reach it from every instance. */
  runners: ProjectRunners;
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
  /**
   * What follows a node recorded stopped, beside its own row: the captures of its links end when no end of the
   * link runs any more (links/capture.ts). Wired here so that nodes/ does not import links/, which builds on it.
   */
  nodeStopped(nodeId: string): Promise<void>;
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
  placement.record = (nodeId, state) => setNodeRuntimeState(ctx, nodeId, state);
  placement.start();
  let runners: ProjectRunners | undefined;
  try {
    runtime.start();
    runners = new ProjectRunners(ctx, runtime, await startPresence(ctx), await openCommandChannel(ctx));
    runtime.onStopped = (nodeIds) => runners!.recordStopped(nodeIds);
    // A compute that came back lost its NIOs: the runner of each project unwires and wires its links there again.
    placement.relink = async (projectId, linkIds) => {
      await runners!.apply(projectId, { do: "unwireLinks", linkIds });
      await runners!.apply(projectId, { do: "wireLinks", linkIds });
    };
    // What the database says runs here, or under a dead runner, is corrected before the listener opens.
    runtime.adopt(await runners.recover());
  } catch (e) {
    // Nothing half-started stays behind (the server stops only features whose start() returned).
    await placement.stop();
    await runtime.stop();
    await runners?.stop().catch(() => {});
    throw e;
  }
  computes.start();
  const reads = projectReadViews(ctx);
  const listeners = new ProjectListeners(ctx, await createListenerTally(ctx));
  const nodeStopped = (nodeId: string) => stopOrphanCaptures(ctx, nodeId);
  return { runtime, runners, placement, computes, listeners, settingWrites: new KeyedQueue(), reads, nodeStopped };
}

/**
 * Stops them in reverse order: no auto_close after this, no polling, then every process, relay and device, then
 * what ran here is recorded stopped and its projects given up.
 */
export async function stopEmulationServices({ runtime, runners, placement, computes, listeners, reads }: EmulationServices): Promise<void> {
  await listeners.stop();
  await reads.stop();
  await computes.stop();
  await placement.stop();
  await runtime.stop();
  // Before the bus and the database close (server.ts stops features first): nobody reads them `started` after exit.
  await runners.stop();
}

import os from "node:os";
import type { AppContext } from "../../platform/context.js";
import { GNS3_VERSION } from "../core/version.js";
import { systemUsage } from "./system-usage.js";

/** The GNS3 compute object. The password is deliberately absent: it is write-only. */
export interface Compute {
  compute_id: string;
  name: string;
  protocol: "http" | "https";
  host: string;
  port: number;
  user: string | null;
  connected: boolean;
  cpu_usage_percent: number | null;
  memory_usage_percent: number | null;
  last_error: string | null;
  capabilities: Capabilities;
}

export type ComputeEvent = { type: "compute.created" | "compute.updated" | "compute.deleted"; compute: Compute };

declare module "../core/events.js" {
  interface ControllerEvents {
    compute: ComputeEvent;
  }
}

export interface Capabilities {
  version: string | null;
  node_types: string[];
  platform?: string;
}

/** What the connection monitor knows about a remote compute; nothing of it is stored. */
export interface LiveState {
  connected: boolean;
  last_error: string | null;
  capabilities: Capabilities;
  cpu_usage_percent: number | null;
  memory_usage_percent: number | null;
}

export const disconnected = (): LiveState => ({
  connected: false,
  last_error: null,
  capabilities: { version: null, node_types: [] },
  cpu_usage_percent: null,
  memory_usage_percent: null,
});

export const LOCAL_ID = "local";
/** A node placed on another compute (driven through its compute API by remote-compute/placement.ts). */
export const isRemote = (node: { computeId: string }) => node.computeId !== LOCAL_ID;
/** Reserved by GNS3 for the GNS3 VM compute, which Patchbay does not run. */
export const VM_ID = "vm";

/**
 * What this server can run itself: the node types its runtime lists (its drivers; qemu only when
 * `qemu-system-x86_64` is installed: GNS3 lists every emulator it knows, but the GUI offers a compute for a
 * template by this list, so a host that cannot start a VM is not offered).
 */
export function localCapabilities(ctx: AppContext): Capabilities {
  return { version: GNS3_VERSION, node_types: ctx.services.emulation.runtime.nodeTypes(), platform: process.platform };
}

export function localName(): string {
  const host = os.hostname();
  return host === "gns3vm" ? "Main server" : host; // GNS3 names the local compute of its own VM this way
}

export function localCompute(ctx: AppContext): Compute {
  const { host, port, tls, auth } = ctx.config;
  return {
    compute_id: LOCAL_ID,
    name: localName(),
    protocol: tls ? "https" : "http",
    host: host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host,
    port,
    user: auth?.user ?? null,
    connected: true,
    ...systemUsage(),
    last_error: null,
    capabilities: localCapabilities(ctx),
  };
}

export interface ComputeRow {
  id: string;
  name: string;
  protocol: string;
  host: string;
  port: number;
  user: string | null;
  passwordSeal: string | null;
}

export function remoteCompute(row: ComputeRow, live: LiveState): Compute {
  return {
    compute_id: row.id,
    name: row.name,
    protocol: row.protocol as Compute["protocol"],
    host: row.host,
    port: row.port,
    user: row.user,
    ...live,
  };
}

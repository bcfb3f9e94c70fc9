import type { Node } from "../../../generated/prisma-sqlite/client.js";
import { cloudDriver } from "./cloud.js";
import type { ConsoleRules, HostPolicy, NodeArtifacts, NodeDriver, StartupScript } from "./driver.js";
import { dockerDriver } from "./docker.js";
import { ethernetHubDriver } from "./ethernet-hub.js";
import { ethernetSwitchDriver } from "./ethernet-switch.js";
import { natDriver } from "./nat.js";
import { NOT_RUN_HERE } from "./not-run.js";
import { qemuDriver } from "./qemu.js";
import { vpcsDriver } from "./vpcs.js";

/**
 * The node drivers of this compute: the one place that says which node types run here and how. Adding a node
 * type is adding a driver module to this list (and taking the type out of not-run.ts). The order is the one
 * messages name them in and the compute API's routes are made in.
 */
const DRIVERS = [vpcsDriver, qemuDriver, dockerDriver, ethernetHubDriver, ethernetSwitchDriver, cloudDriver, natDriver] as const;
const ALL: readonly NodeDriver[] = DRIVERS;
const BY_TYPE = new Map(ALL.map((d) => [d.nodeType, d]));

export type RunnableType = (typeof DRIVERS)[number]["nodeType"];

export const driverFor = (nodeType: string): NodeDriver | undefined => BY_TYPE.get(nodeType);
export const runnableTypes = (): RunnableType[] => DRIVERS.map((d) => d.nodeType);

/** Hubs, switches, clouds and NATs: forwarding from their first link on, never started, stopped or recorded stopped. */
export const isAlwaysOn = (nodeType: string): boolean => driverFor(nodeType)?.runs === "device";
export const alwaysOnTypes = (): string[] => ALL.filter((d) => d.runs === "device").map((d) => d.nodeType);

/** Types that run a process: a command line, and a status that changes when the process ends. */
export const runsProcess = (nodeType: string): boolean => driverFor(nodeType)?.runs === "process";
export const processTypes = (): string[] => ALL.filter((d) => d.runs === "process").map((d) => d.nodeType);

/** "vpcs, qemu, docker, ethernet_hub, ethernet_switch, cloud and nat", as messages name what this compute runs. */
export function runnableTypesInWords(): string {
  const types = runnableTypes();
  return `${types.slice(0, -1).join(", ")} and ${types.at(-1)}`;
}

/**
 * The node types of this compute's capabilities: those it always offers, then those offered only when what they
 * need is on this host (qemu: its emulator; cloud and nat: socat, root, and for nat a NAT bridge or the programs
 * to make one).
 */
export function listedNodeTypes(host: HostPolicy): string[] {
  return [...ALL.filter((d) => !d.listedWhen), ...ALL.filter((d) => d.listedWhen?.(host))].map((d) => d.nodeType);
}

/**
 * Why this host cannot run the node: its driver's answer, or what a type without a driver would need (the 409).
 * `host`: the operator's settings (local mode, NAT); without them, no host power is granted.
 */
export function unavailableReason(node: Pick<Node, "name" | "nodeType" | "id" | "propertiesJson">, host?: HostPolicy): string | null {
  const driver = driverFor(node.nodeType);
  if (driver) return driver.unavailable(node, host ?? { local: false, nat: { natInterface: "virbr0", bridge: "pbnat0", subnet: "192.168.122.0/24" } });
  const needs = NOT_RUN_HERE[node.nodeType]?.needs ?? "an emulator this host does not have";
  return `Node ${node.name} cannot start: ${node.nodeType} nodes are not supported by this compute (they need ${needs}); it runs ${runnableTypesInWords()} nodes`;
}

/** A link is about to be made to a port of a node on this compute: its driver may refuse it (throws). */
export function checkLinkEnd(node: Pick<Node, "name" | "nodeType" | "id" | "propertiesJson">, adapter: number, port: number, host: HostPolicy): void {
  driverFor(node.nodeType)?.checkLink?.(node, adapter, port, host);
}

/** The type's emulator properties as stored (defaults, checks), when its driver prepares them; else as given. */
export async function prepareProperties(
  ctx: Parameters<NonNullable<NodeDriver["prepareProperties"]>>[0],
  node: { id: string; nodeType: string; name?: string },
  merged: Record<string, unknown>,
  changed: readonly string[] | "all",
): Promise<Record<string, unknown>> {
  const driver = driverFor(node.nodeType);
  return driver?.prepareProperties ? driver.prepareProperties(ctx, node, merged, changed) : merged;
}

/** The console rules of any GNS3 node type; a type known to neither table takes any console, telnet by default. */
export function consoleRules(nodeType: string): ConsoleRules {
  return driverFor(nodeType)?.consoles ?? NOT_RUN_HERE[nodeType]?.consoles ?? { default: "telnet" };
}

/** Whether the type has a console at all (the hub has none: no console fields in its compute object and body). */
export const hasConsole = (driver: NodeDriver): boolean => driver.consoles.types?.some((t) => t !== null && t !== "none") ?? true;

/** The startup script of the type's nodes, when it has one (VPCS). */
export function startupScriptOf(nodeType: string): StartupScript | undefined {
  const driver = driverFor(nodeType);
  return driver?.runs === "process" ? driver.startupScript : undefined;
}

/** UDP ports one link end of a node binds here, as offsets from the port it listens on. */
export const udpOffsets = (nodeType: string): readonly number[] => driverFor(nodeType)?.udpOffsets ?? [0];

/** Whether the type has idle-PC values (Dynamips routers). */
export const hasIdlePc = (nodeType: string): boolean => NOT_RUN_HERE[nodeType]?.idlePc === true;

/** The host state a node of this type keeps while it exists (docker: its container), when it has one. */
export function artifactsOf(nodeType: string): NodeArtifacts | undefined {
  const driver = driverFor(nodeType);
  return driver?.runs === "process" ? driver.artifacts : undefined;
}

/** Every node type's host state keeper (crash recovery, project close and shutdown remove what they kept). */
export const allArtifacts = (): NodeArtifacts[] => ALL.flatMap((d) => (d.runs === "process" && d.artifacts ? [d.artifacts] : []));


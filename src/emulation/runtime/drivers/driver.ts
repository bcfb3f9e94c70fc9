import type { Node } from "../../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../../platform/context.js";
import type { ConsoleType } from "../../node-model/vocabularies.js";
import type { Nio, PortDevice } from "../ethernet.js";
import type { NatNetwork, NatSettings } from "../nat-network.js";

/**
 * A node driver: everything this compute knows of one node type, declared once — what runs (a process, or a
 * device forwarding inside the server), its console rules, the UDP ports a link end binds, whether it pauses,
 * what it needs from the host, how it starts, and its form in the compute API. `LocalCompute` keeps what every
 * type shares (ports, link relays, captures) and asks the driver the rest; everything else asks the registry
 * (registry.ts). The GNS3 node types this compute does not run are listed in not-run.ts.
 */
export type NodeDriver = ProcessDriver | DeviceDriver;

/** Console types a node type accepts (GNS3's compute refuses the others) and the one a new node gets. */
export interface ConsoleRules {
  /** In the order the 400 lists them; absent: any console type. */
  readonly types?: readonly (ConsoleType | null)[];
  readonly default: ConsoleType | null;
  /** GNS3 gives the node a console port even when its console type is none (the switch). */
  readonly portWithoutConsole?: boolean;
}

/** What the operator allows and set up on this host, which some node types depend on (cloud, NAT). */
export interface HostPolicy {
  /** Local mode (PATCHBAY_LOCAL): the operator's opt-in to host powers, such as binding host interfaces. */
  local: boolean;
  nat: NatSettings;
  /** Why the NAT network could not take a port now (its bridge's name taken, its subnet overlapping), or null. */
  natProblem?(): string | null;
}

interface DriverBase {
  readonly nodeType: string;
  readonly consoles: ConsoleRules;
  /** UDP ports one link end of the node binds, as offsets from the port it listens on. */
  readonly udpOffsets: readonly number[];
  /** Suspend pauses the node; otherwise it is accepted and nothing changes (GNS3 answers a vpcs suspend so). */
  readonly suspends: boolean;
  /** Why this host cannot run the node (a program missing), or null. */
  unavailable(node: Pick<Node, "name" | "id" | "propertiesJson">, host: HostPolicy): string | null;
  /**
   * Listed in this compute's capabilities only when this holds (the GUI offers a compute for a template by that
   * list, so a host that cannot run the type is not offered); absent: always listed.
   */
  listedWhen?(host: HostPolicy): boolean;
  /**
   * A link is about to be made to port `port` of adapter `adapter` of the node (on this compute): throws when this
   * compute will not carry it (a cloud port bound to a host interface outside local mode, or to a missing one).
   */
  checkLink?(node: Pick<Node, "name" | "id" | "propertiesJson">, adapter: number, port: number, host: HostPolicy): void;
  /**
   * The node's emulator properties as stored, from those given (a new node: `changed` "all"; an update: the keys sent,
   * merged into the current ones): defaults filled, entries checked (400), changes refused that cannot apply (409) —
   * on whichever compute the node runs; absent: kept as given.
   */
  prepareProperties?(ctx: AppContext, node: { id: string; name?: string }, merged: Record<string, unknown>, changed: readonly string[] | "all"): Promise<Record<string, unknown>>;
  /** The node's settings in its compute object (GNS3's per-emulator `__json__`), beside name, ids and status. */
  computeView(properties: Record<string, unknown>): Record<string, unknown>;
  /** What a controller sends another compute to create the node there, beside its id, name and console. */
  remoteCreate(ctx: AppContext, node: Node): Promise<Record<string, unknown>>;
  /** The node's settings in the compute API's flat form, sent to the compute that runs it when they change. */
  remoteSettings(properties: Record<string, unknown>): Record<string, unknown>;
}

/** A node that runs as a process of its own (vpcs, QEMU): started, stopped, its state read back by a controller. */
export interface ProcessDriver extends DriverBase {
  readonly runs: "process";
  /** The script of the node directory the process runs at start, when the type has one (VPCS's startup.vpc). */
  readonly startupScript?: StartupScript;
  /** Adapters whose port 0 the process binds at start: fixed for its life, so links made later land on them. */
  adaptersAtStart(node: Node): number;
  /** Guest RAM (MB) the compute's memory cap counts for the node; 0 for what is not a VM. */
  memoryMb(node: Node): number;
  /** GNS3's replicate_network_connection_state: the compute drops the carrier of adapters without a link. */
  carrierFollowsLinks?(node: Node): boolean;
  /** Spawns the process on the attachments the compute took; throws (409) when it cannot start. */
  start(node: Node, launch: ProcessLaunch): Promise<NodeProcess>;
  /** Host state the node keeps while it exists, not only while it runs (docker: its container); absent: none. */
  readonly artifacts?: NodeArtifacts;
}

/**
 * What a node keeps on the host from its creation to its deletion (a docker node's container, created with the node
 * as GNS3 does, kept across stop, removed with the node and when its project closes). Found again by this data
 * directory's marks (container labels), so a restarted server removes what a crash left.
 */
export interface NodeArtifacts {
  /** The node was created, or changed as `needsNew` says: (re)makes its host state; answers properties to record. */
  provision(node: Node, env: { ctx: AppContext; owner: string; workdir: string }): Promise<Record<string, unknown>>;
  /** Whether a change (property keys changed, node renamed) needs the host state made again. */
  needsNew(changedKeys: readonly string[], renamed: boolean): boolean;
  /** Removes the host state of one node, of one project, or (no scope) all of this data directory's; answers how many. */
  remove(owner: string, scope: { nodeId?: string; projectId?: string }): Promise<number>;
}

/**
 * A node that forwards inside this server (hub, switch) or joins its ports to the host (cloud, NAT): always on,
 * created with its first link end.
 */
export interface DeviceDriver<D extends PortDevice = PortDevice> extends DriverBase {
  readonly runs: "device";
  create(node: Node, env: DeviceEnv): D;
  /** The node's properties changed (node.updated): a switch takes its new ports mapping. */
  reconfigure(device: D, properties: Record<string, unknown>): void;
}

/** What the compute gives a device it creates. */
export interface DeviceEnv {
  ctx: AppContext;
  /** The compute's identity (its data directory) and pid-file directory (host-side helper processes). */
  owner: string;
  runDir: string;
  host: HostPolicy;
  /** The network NAT ports lead into (nat-network.ts), one per compute. */
  nat: NatNetwork;
}

/** A startup script, kept in the node directory (not in the properties); the domain writes it as the node changes. */
export interface StartupScript {
  /** Splits a template's base script off a new node's properties: the script, and the properties to keep. */
  takeBase(properties: Record<string, unknown>): { script?: string; rest: Record<string, unknown> };
  /** Writes a script for the node (`%h` takes its name). */
  write(nodeDir: string, nodeName: string, script: string): Promise<void>;
  /** The node has a new name (renamed, or a duplicate): the script's name lines follow. */
  rename(nodeDir: string, nodeName: string): Promise<void>;
}

/** What the compute gives a process it starts. */
export interface ProcessLaunch {
  ctx: AppContext;
  /** The compute's identity (its data directory) and pid-file directory. */
  owner: string;
  runDir: string;
  /** The node directory. */
  workdir: string;
  /** Adapter n's UDP NIO: the node listens on `local` and sends to `remote`, where the link relay listens. */
  nics: Nio[];
  /** The process ended without being asked (a crash, a guest powering off). */
  onExit(proc: NodeProcess, log: string): void;
}

/** A running node process, as the compute holds it; what it cannot do it does not have. */
export interface NodeProcess {
  readonly commandLine: string;
  readonly pids: number[];
  readonly running: boolean;
  /** Guest RAM (MB) the memory cap counts. */
  readonly ram?: number;
  stop(): Promise<void>;
  suspend?(): Promise<void>;
  resume?(): Promise<void>;
  /** Resets the machine in place (QEMU's system_reset). */
  reset?(): Promise<void>;
  /** Carrier of adapter n's NIC. */
  setLink?(adapter: number, up: boolean): Promise<void>;
  /** Properties the start changed, for the domain to record (a docker node's container made again: container_id). */
  readonly recorded?: Record<string, unknown>;
}

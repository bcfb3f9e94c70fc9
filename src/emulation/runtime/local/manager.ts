import fs from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Link, LinkEndpoint, Node } from "../../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../../platform/context.js";
import { ConflictError } from "../../../platform/core/errors.js";
import { KeyedQueue } from "../../../platform/keyed-queue.js";
import { nodeProperties } from "../../node-model/serialize.js";
import type { PortDevice } from "../ethernet.js";
import type { DeviceDriver, HostPolicy, NodeProcess, ProcessDriver } from "../drivers/driver.js";
import { allArtifacts, artifactsOf, driverFor, isAlwaysOn, listedNodeTypes, runsProcess, udpOffsets, unavailableReason } from "../drivers/registry.js";
import { LinkTunnel, type LinkFilters, type TunnelSide } from "../link-tunnel.js";
import { DATA_LINK_TYPES, type DataLinkType, PcapWriter } from "../pcap.js";
import { removeStaleQmpSockets } from "../qemu.js";
import { UdpPortPool } from "../udp-port-pool.js";
import type { Compute, RunState } from "../compute.js";
import { killNowSync, recoverLeftovers } from "../processes.js";
import { NatNetwork } from "../nat-network.js";
import { freshReadBy } from "../../../platform/fresh-read.js";

/**
 * The local compute's live state: node processes (vpcs, QEMU), in-process hubs/switches, link relays and captures,
 * plus the UDP ports they hold. One per server (`ctx.services.emulation.runtime`). The database stays the source of truth for what exists;
 * this object only owns what runs. It follows no event: the operations that change a node, a link or a project
 * command it (through the project's runner, instances/runners.ts) and await it before they announce the change.
 * What differs per node type is asked of the node's driver (drivers/); this keeps what every type shares.
 */
type LinkRow = Link & { endpoints: LinkEndpoint[] };

interface Attachment {
  /** Where the node listens; it also binds the ports at `offsets` from it (its driver's udpOffsets). */
  nodeLocal: number;
  offsets: readonly number[];
  /** Where the node sends; the link relay listens there. */
  peer: number;
  holders: Set<"node" | "link">;
}

interface WiredLink {
  projectId: string;
  tunnel: LinkTunnel;
  ends: { nodeId: string; nodeType: string; adapter: number; port: number; key: string; external?: ExternalEnd }[];
  capture?: PcapWriter;
}

/**
 * A tunnel side that is not a port of this host: a node on another compute (controller side of a cross-host
 * link) or the far end of a compute NIO. `release` undoes whatever was set up for it (ports, the remote NIO).
 */
export interface ExternalEnd {
  listen: number;
  deliver: number;
  host: string;
  bind?: string;
  release(): Promise<void> | void;
}

/** Sets up the far side of a link end whose node runs on another compute (installed by remote-compute/placement.ts). */
export type RemoteEndFactory = (projectId: string, node: Node, adapter: number, port: number) => Promise<ExternalEnd>;

/** Wires of compute NIOs (compute-api/nodes/operations.ts) share the link table under this prefix; they are not DB links. */
export const NIO_WIRE = "nio:";

const portKey = (nodeId: string, adapter: number, port: number) => `${nodeId}/${adapter}/${port}`;

/** Links of a project wired at once when it is (re)opened: each mostly waits for its sockets to bind. */
const RECONCILE_PARALLELISM = 16;

export class LocalCompute implements Compute {
  readonly pool: UdpPortPool;
  readonly owner: string;
  readonly runDir: string;
  private attachments = new Map<string, Attachment>();
  private allocating = new Map<string, Promise<Attachment>>();
  /** Running node processes; `ports` are the attachment keys the process holds ("node" holder). */
  private processes = new Map<string, { projectId: string; nodeType: string; proc: NodeProcess; ports: string[] }>();
  private devices = new Map<string, { projectId: string; driver: DeviceDriver; device: PortDevice }>();
  /** The network NAT nodes' ports lead into (libvirt's virbr0, or Patchbay's own bridge made on demand). */
  readonly nat: NatNetwork;
  private links = new Map<string, WiredLink>();
  /** Guest RAM of VMs being launched (not yet in `processes`), counted by the memory cap. */
  private startingRam = 0;
  private locks = new KeyedQueue();
  private closed = false;
  /**
   * Settles when what a previous run left is gone (sweepLeftovers()). What could collide with a leftover (a start, a
   * link's relay, a container made or removed) waits for it: the sweep runs once the listener is open.
   */
  private readonly swept: Promise<void>;
  private sweeping?: Promise<void>;
  private markSwept: () => void = () => {};
  /** Settles when crash recovery is done: leftovers swept, then the open projects' links wired (adopt()). */
  ready: Promise<void>;
  private readonly exitHandler = () => killNowSync(this.owner);
  /** Link ends on remote computes are reached through it (remote-compute/placement.ts; set by the emulation feature). */
  remoteEnd?: RemoteEndFactory;
  /** Told when nodes stopped by themselves (a VM that ended), so that the domain records it. */
  onStopped: (nodeIds: string[]) => Promise<void> = async () => {};

  constructor(private readonly ctx: AppContext) {
    this.pool = new UdpPortPool(ctx.config.udpPorts[0], ctx.config.udpPorts[1]);
    this.owner = path.resolve(ctx.config.dataDir);
    this.runDir = path.join(this.owner, "run");
    this.nat = new NatNetwork(ctx.config.nat, this.owner, this.runDir, ctx.log);
    this.swept = new Promise((resolve) => (this.markSwept = resolve));
    this.ready = this.swept;
  }

  /** What the operator allows and set up (local mode, NAT), as the drivers ask it. */
  get host(): HostPolicy {
    return { local: this.ctx.config.local, nat: this.ctx.config.nat, natProblem: () => this.nat.problem() };
  }

  /** Whatever ends this process kills this server's node processes with it. */
  start(): void {
    process.on("exit", this.exitHandler);
  }

  /**
   * Crash recovery of the host: what a previous run of this data directory left (processes found by a /proc scan,
   * the Engine API's containers, the NAT bridge) is killed and removed, then `swept` settles. Called once the server
   * listens, and by stop() when it never did; once. What the database says about the leftovers is the domain's to
   * correct before the listener opens (instances/runners.ts).
   */
  sweepLeftovers(): Promise<void> {
    this.sweeping ??= this.sweep()
      .catch((e) => this.ctx.log.error("runtime: leftovers of a previous run not removed", { error: String(e) }))
      .finally(() => this.markSwept());
    return this.sweeping;
  }

  private async sweep(): Promise<void> {
    const recorded = fs.existsSync(this.runDir)
      ? fs.readdirSync(this.runDir).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -".json".length))
      : [];
    const killed = await recoverLeftovers(this.runDir, this.owner);
    if (killed.length) this.ctx.log.info("runtime: killed leftover processes", { pids: killed });
    await this.removeArtifacts({}, "leftovers of a previous run removed");
    removeStaleQmpSockets(this.runDir, recorded); // no VM of this data directory runs any more
    await this.nat.recover(); // its dnsmasq went with the leftovers; its bridge and rules go now
  }

  /**
   * Wires the links of the projects this instance runs, in the background (wiring, starting and capture wait for
   * `ready`). Set `remoteEnd` first.
   */
  adopt(projectIds: string[]): void {
    this.ready = (async () => {
      await this.swept;
      for (const id of projectIds) {
        if (!this.closed) await this.reconcileProject(id).catch((e) => this.ctx.log.info("runtime: project not wired", { project: id, error: String(e) }));
      }
    })();
    // A failure (e.g. the server closing under it) must not go unhandled.
    this.ready.catch((e) => {
      if (!this.closed) this.ctx.log.error("runtime: recovery failed", { error: String(e) });
    });
  }

  /** The node types this compute offers (its capabilities), from its drivers. */
  nodeTypes(): string[] {
    return listedNodeTypes(this.host);
  }

  /** Serialises runtime work per key (node or link), like GNS3's per-node lock. */
  serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(key, fn);
  }

  // ------------------------------------------------------------------ ports

  private async attach(node: Pick<Node, "id" | "nodeType">, adapter: number, port: number, holder: "node" | "link"): Promise<Attachment> {
    const key = portKey(node.id, adapter, port);
    const a = this.attachments.get(key) ?? (await this.allocate(key, node.nodeType));
    a.holders.add(holder);
    return a;
  }

  /**
   * The port's UDP ports, allocated once even when a start and a link's wiring ask at the same moment (start all
   * right after the links are made): both must use the same ports, or the node sends where no relay listens.
   */
  private allocate(key: string, nodeType: string): Promise<Attachment> {
    let pending = this.allocating.get(key);
    if (!pending) {
      pending = (async () => {
        const offsets = udpOffsets(nodeType);
        const nodeLocal = await this.pool.allocate(offsets);
        let peer: number;
        try {
          peer = await this.pool.allocate();
        } catch (e) {
          this.pool.release(nodeLocal, offsets);
          throw e;
        }
        const a: Attachment = { nodeLocal, offsets, peer, holders: new Set() };
        this.attachments.set(key, a);
        return a;
      })().finally(() => this.allocating.delete(key));
      this.allocating.set(key, pending);
    }
    return pending;
  }

  private detach(key: string, holder: "node" | "link"): void {
    const a = this.attachments.get(key);
    if (!a) return;
    a.holders.delete(holder);
    if (a.holders.size) return;
    this.attachments.delete(key);
    this.pool.release(a.nodeLocal, a.offsets);
    this.pool.release(a.peer);
  }

  // ------------------------------------------------------------------ builtin devices

  /**
   * A link end at an always-on node: its device (made by its driver with the first link) forwards on that port,
   * from the node's attachment. A node that runs a process needs nothing: it sends and listens there itself.
   */
  private async connectDevice(node: Node, adapter: number, port: number): Promise<void> {
    const driver = driverFor(node.nodeType);
    if (driver?.runs !== "device") return;
    let d = this.devices.get(node.id);
    if (!d) {
      const env = { ctx: this.ctx, owner: this.owner, runDir: this.runDir, host: this.host, nat: this.nat };
      this.devices.set(node.id, (d = { projectId: node.projectId, driver, device: driver.create(node, env) }));
    }
    const a = this.attachments.get(portKey(node.id, adapter, port))!;
    try {
      await d.device.addNio(port, { local: a.nodeLocal, remote: a.peer });
    } catch (e) {
      if (!d.device.connectedPorts.length) {
        this.devices.delete(node.id);
        await d.device.close();
      }
      throw e;
    }
  }

  /** The node's settings changed (a switch's ports mapping): its device, when it has one, follows at once. */
  async reconfigureNode(nodeId: string, properties: Record<string, unknown>): Promise<void> {
    const d = this.devices.get(nodeId);
    d?.driver.reconfigure(d.device, properties);
  }

  // ------------------------------------------------------------------ links

  /** Wires a link that has both ends (idempotent: an existing relay only gets its filters/suspend refreshed). */
  async syncLink(linkId: string): Promise<void> {
    await this.ready.catch(() => {});
    return this.syncLinkNow(linkId);
  }

  private syncLinkNow(linkId: string): Promise<void> {
    return this.serial(`link:${linkId}`, async () => {
      if (this.closed || linkId.startsWith(NIO_WIRE)) return;
      const link = (await this.ctx.db.link.findUnique({ where: { id: linkId }, include: { endpoints: true } })) as LinkRow | null;
      return this.syncLinkRow(linkId, link);
    });
  }

  /** syncLinkNow with the link (and its ends' nodes, when known) read already; under the link's lock. */
  private async syncLinkRow(linkId: string, link: LinkRow | null, nodes?: Map<string, Node>): Promise<void> {
    if (this.closed) return;
    if (!link || link.endpoints.length < 2) return this.unwireNow(linkId);
    const keys = [...link.endpoints].sort((a, b) => a.position - b.position).slice(0, 2).map((e) => portKey(e.nodeId, e.adapterNumber, e.portNumber));
    const current = this.links.get(linkId);
    // Same id, other ends (a snapshot restore recreates links): rewire.
    if (current && current.ends.map((e) => e.key).join() !== keys.join()) await this.unwireNow(linkId);
    const wired = this.links.get(linkId) ?? (await this.wire(link, nodes));
    // Closed while it was being wired (a cloud port's socat takes a moment): the close's release may have missed it.
    if ((await this.projectStatus(link.projectId)) === "closed") return this.unwireNow(linkId);
    wired.tunnel.setFilters(parseFilters(link.filtersJson));
    wired.tunnel.setSuspended(link.suspend);
  }

  /** A project's status, one read for the links wired together (a read that began after the caller asked). */
  private readonly projectStatus = freshReadBy(async (projectId) => (await this.ctx.db.project.findUnique({ where: { id: projectId }, select: { status: true } }))?.status);

  private async wire(link: LinkRow, known?: Map<string, Node>): Promise<WiredLink> {
    const ends = [...link.endpoints].sort((a, b) => a.position - b.position).slice(0, 2);
    const byId = known ?? new Map((await this.ctx.db.node.findMany({ where: { id: { in: ends.map((e) => e.nodeId) } } })).map((n) => [n.id, n]));
    const taken: { key: string; external?: ExternalEnd }[] = [];
    const sides: TunnelSide[] = [];
    try {
      for (const e of ends) {
        const node = byId.get(e.nodeId);
        if (!node) throw new ConflictError(`Node ID ${e.nodeId} doesn't exist`);
        if (node.computeId !== "local" && this.remoteEnd) {
          const external = await this.remoteEnd(link.projectId, node, e.adapterNumber, e.portNumber);
          taken.push({ key: portKey(node.id, e.adapterNumber, e.portNumber), external });
          sides.push(external);
          continue;
        }
        const a = await this.attach(node, e.adapterNumber, e.portNumber, "link");
        taken.push({ key: portKey(node.id, e.adapterNumber, e.portNumber) });
        sides.push({ listen: a.peer, deliver: a.nodeLocal });
      }
      const tunnel = await new LinkTunnel(sides[0], sides[1]).open();
      for (const e of ends) {
        const node = byId.get(e.nodeId)!;
        if (taken.some((t) => t.external && t.key === portKey(node.id, e.adapterNumber, e.portNumber))) continue;
        await this.connectDevice(node, e.adapterNumber, e.portNumber);
      }
      const wired: WiredLink = {
        projectId: link.projectId,
        tunnel,
        ends: ends.map((e) => ({
          nodeId: e.nodeId,
          nodeType: byId.get(e.nodeId)!.nodeType,
          adapter: e.adapterNumber,
          port: e.portNumber,
          key: portKey(e.nodeId, e.adapterNumber, e.portNumber),
          external: taken.find((t) => t.key === portKey(e.nodeId, e.adapterNumber, e.portNumber))?.external,
        })),
      };
      this.links.set(link.id, wired);
      for (const e of wired.ends) if (!e.external) await this.carrier(e.nodeId, e.adapter, true);
      return wired;
    } catch (e) {
      for (const t of taken) {
        if (t.external) await t.external.release();
        else this.detach(t.key, "link");
      }
      throw e;
    }
  }

  /**
   * A compute NIO (GNS3's `adapters/{a}/ports/{p}/nio`): the node port on this host joined to a UDP endpoint
   * elsewhere through a relay, as GNS3 joins them through uBridge — so capture works on the port. Replaces a
   * NIO already on that port.
   */
  async wireNio(node: Node, adapter: number, port: number, external: ExternalEnd): Promise<string> {
    await this.ready.catch(() => {});
    const id = `${NIO_WIRE}${portKey(node.id, adapter, port)}`;
    await this.serial(`link:${id}`, async () => {
      await this.unwireNow(id);
      const a = await this.attach(node, adapter, port, "link");
      const key = portKey(node.id, adapter, port);
      let tunnel: LinkTunnel | undefined;
      try {
        tunnel = await new LinkTunnel({ listen: a.peer, deliver: a.nodeLocal }, external).open();
        await this.connectDevice(node, adapter, port);
      } catch (e) {
        tunnel?.close();
        this.detach(key, "link");
        await external.release();
        throw e;
      }
      const ends = [
        { nodeId: node.id, nodeType: node.nodeType, adapter, port, key },
        { nodeId: "", nodeType: "nio_udp", adapter, port, key: id, external },
      ];
      this.links.set(id, { projectId: node.projectId, tunnel, ends });
      await this.carrier(node.id, adapter, true);
    });
    return id;
  }

  async unwireLink(linkId: string): Promise<void> {
    return this.serial(`link:${linkId}`, () => this.unwireNow(linkId));
  }

  private async unwireNow(linkId: string): Promise<void> {
    const w = this.links.get(linkId);
    if (!w) return;
    this.links.delete(linkId);
    w.capture?.close();
    w.tunnel.close();
    for (const end of w.ends) {
      if (end.external) {
        await end.external.release();
        continue;
      }
      await this.carrier(end.nodeId, end.adapter, false);
      const d = this.devices.get(end.nodeId);
      if (d) {
        await d.device.removeNio(end.port);
        if (!d.device.connectedPorts.length) {
          await d.device.close();
          this.devices.delete(end.nodeId);
        }
      }
      this.detach(end.key, "link");
    }
  }

  wiredLink(linkId: string): { tunnel: LinkTunnel; capture?: PcapWriter } | undefined {
    return this.links.get(linkId);
  }

  // ------------------------------------------------------------------ capture

  async startCapture(linkId: string, file: string, dataLinkType: DataLinkType = "DLT_EN10MB"): Promise<void> {
    await this.syncLink(linkId);
    return this.serial(`link:${linkId}`, async () => {
      const w = this.links.get(linkId);
      if (!w) throw new ConflictError("Cannot capture because there is no running device on this link");
      if (w.capture) throw new ConflictError(`Packet capture is already activated on link ${linkId}`);
      w.capture = new PcapWriter(file, DATA_LINK_TYPES[dataLinkType]);
      w.tunnel.startCapture(w.capture);
    });
  }

  async stopCapture(linkId: string): Promise<void> {
    return this.serial(`link:${linkId}`, async () => {
      const w = this.links.get(linkId);
      if (!w?.capture) return;
      w.tunnel.stopCapture();
      w.capture.close();
      w.capture = undefined;
    });
  }

  capture(linkId: string): PcapWriter | undefined {
    return this.links.get(linkId)?.capture;
  }

  // ------------------------------------------------------------------ nodes

  isRunning(nodeId: string): boolean {
    return this.processes.get(nodeId)?.proc.running ?? false;
  }

  /**
   * Starts the node's process and returns its command line; an always-on device has nothing to start (""). Throws
   * 409 for what this host cannot run.
   */
  async startProcess(node: Node, workdir: string): Promise<string> {
    await this.ready.catch(() => {});
    const reason = unavailableReason(node, this.host);
    if (reason) throw new ConflictError(reason);
    const driver = driverFor(node.nodeType)!;
    if (driver.runs === "device") {
      // GNS3's start re-adds every NIO: a cloud port whose host side went away is joined again, and a link that could
      // not be wired (its interface was missing then) is wired now — or the start answers why not (409).
      await this.devices.get(node.id)?.device.revive?.();
      const links = await this.ctx.db.link.findMany({ where: { endpoints: { some: { nodeId: node.id } } }, select: { id: true } });
      for (const l of links) if (!this.links.has(l.id)) await this.syncLinkNow(l.id);
      return "";
    }
    const running = this.processes.get(node.id);
    if (running?.proc.running) {
      await running.proc.resume?.(); // GNS3: start on a paused VM resumes it
      return running.proc.commandLine;
    }
    return this.launch(driver, node, workdir);
  }

  /**
   * Refused (409) before anything is launched when a VM's RAM would take the running VMs past the cap; the adapters
   * the process binds get their attachments now (its NIC sockets are fixed for its life), so links made later
   * land on the same ports.
   */
  private async launch(driver: ProcessDriver, node: Node, workdir: string): Promise<string> {
    const ram = driver.memoryMb(node);
    // Checked and reserved with no await in between: VMs started together (bulk start) cannot pass the cap.
    const used = this.startingRam + [...this.processes.values()].reduce((sum, p) => sum + (p.proc.running ? (p.proc.ram ?? 0) : 0), 0);
    const cap = this.ctx.config.vmMemoryLimit;
    if (ram && used + ram > cap) {
      throw new ConflictError(
        `Cannot start ${node.name}: it needs ${ram} MB of RAM and the running VMs of this compute already use ${used} of the ${cap} MB allowed (--vm-memory-limit)`,
      );
    }
    this.startingRam += ram;
    const ports: string[] = [];
    let proc: NodeProcess;
    try {
      const nics = [];
      for (let n = 0; n < driver.adaptersAtStart(node); n++) {
        const a = await this.attach(node, n, 0, "node");
        ports.push(portKey(node.id, n, 0));
        nics.push({ local: a.nodeLocal, remote: a.peer });
      }
      const onExit = (exited: NodeProcess, log: string) => void this.exited(node.id, exited, log);
      proc = await driver.start(node, { ctx: this.ctx, owner: this.owner, runDir: this.runDir, workdir, nics, onExit });
    } catch (e) {
      for (const k of ports) this.detach(k, "node");
      throw e;
    } finally {
      this.startingRam -= ram;
    }
    this.processes.set(node.id, { projectId: node.projectId, nodeType: node.nodeType, proc, ports });
    if (driver.carrierFollowsLinks?.(node)) {
      for (let n = 0; n < ports.length; n++) if (!this.linkedAt(node.id, n)) await proc.setLink?.(n, false).catch(() => {});
    }
    return proc.commandLine;
  }

  private linkedAt(nodeId: string, adapter: number): boolean {
    return [...this.links.values()].some((w) => w.ends.some((e) => e.nodeId === nodeId && e.adapter === adapter));
  }

  /** A link came or went at a running VM's adapter: its NIC's carrier follows (replicate_network_connection_state). */
  private async carrier(nodeId: string, adapter: number, up: boolean): Promise<void> {
    const p = this.processes.get(nodeId)?.proc;
    if (!p?.running || !p.setLink) return;
    await p.setLink(adapter, up).catch((e) => this.ctx.log.info("runtime: set_link failed", { node: nodeId, error: String(e) }));
  }

  /** A process ended by itself (a VM crashing, its guest powering off): its ports go back and the node shows stopped. */
  private async exited(nodeId: string, proc: NodeProcess, log: string): Promise<void> {
    const p = this.processes.get(nodeId);
    if (p?.proc !== proc || this.closed) return;
    this.processes.delete(nodeId);
    for (const k of p.ports) this.detach(k, "node");
    this.ctx.log.error(`runtime: ${p.nodeType} ended on its own`, { node: nodeId, log });
    await this.onStopped([nodeId]).catch((e) => this.ctx.log.error("runtime: a stopped VM was not recorded", { node: nodeId, error: String(e) }));
  }

  /** Pauses the node's running process when it can (a VM); false when nothing that pauses runs. */
  async suspendProcess(nodeId: string): Promise<boolean> {
    const p = this.processes.get(nodeId)?.proc;
    if (!p?.running || !p.suspend) return false;
    await p.suspend();
    return true;
  }

  /**
   * Resets the node's running process in place when it can (QEMU's system_reset; a paused VM runs again); false
   * when the caller must stop and start it.
   */
  async reloadProcess(nodeId: string): Promise<boolean> {
    const p = this.processes.get(nodeId)?.proc;
    if (!p?.running || !p.reset) return false;
    await p.reset();
    await p.resume?.();
    return true;
  }

  async stopProcess(nodeId: string): Promise<void> {
    await this.finish(this.takeProcesses((id) => id === nodeId));
  }

  /**
   * Processes taken out of the running set (so their end is not reported as a crash), before what they run in is
   * removed under them (a project's containers); `finish` then stops them and gives their ports back.
   */
  private takeProcesses(which: (nodeId: string, projectId: string) => boolean) {
    const taken = [...this.processes].filter(([id, p]) => which(id, p.projectId));
    for (const [id] of taken) this.processes.delete(id);
    return taken.map(([, p]) => p);
  }

  /** Stops them all at once (a stop is a signal and a wait for the process to go); their ports go back. */
  private async finish(taken: { proc: NodeProcess; ports: string[] }[]): Promise<void> {
    const results = await Promise.allSettled(
      taken.map(async (p) => {
        try {
          await p.proc.stop();
        } finally {
          for (const k of p.ports) this.detach(k, "node");
        }
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  // ------------------------------------------------------------------ the Compute interface (compute.ts)

  async startNode(node: Node, workdir: string): Promise<RunState[]> {
    const commandLine = await this.startProcess(node, workdir);
    const properties = this.processes.get(node.id)?.proc.recorded;
    return isAlwaysOn(node.nodeType) ? [] : [{ status: "started", commandLine, ...(properties && { properties }) }];
  }

  async stopNode(node: Node): Promise<RunState[]> {
    if (!runsProcess(node.nodeType)) return []; // nothing runs: nothing to stop
    await this.stopProcess(node.id);
    return [{ status: "stopped" }];
  }

  async suspendNode(node: Node): Promise<RunState[]> {
    // What cannot pause accepts the request and nothing changes (VPCS, as in GNS3; hubs and switches).
    if (driverFor(node.nodeType)?.suspends === false) return [];
    const reason = unavailableReason(node, this.host);
    if (reason) throw new ConflictError(reason);
    return (await this.suspendProcess(node.id)) ? [{ status: "suspended" }] : []; // a stopped VM stays stopped
  }

  async reloadNode(node: Node, workdir: string): Promise<RunState[]> {
    const reason = unavailableReason(node, this.host);
    if (reason) throw new ConflictError(reason);
    if (isAlwaysOn(node.nodeType)) return [];
    // GNS3 resets the machine in place (system_reset); a suspended VM runs again. Else: stop, then start.
    if (await this.reloadProcess(node.id)) return [{ status: "started" }];
    return [...(await this.stopNode(node)), ...(await this.startNode(node, workdir))];
  }

  /** Everything of one node: its process, its device, the links wired to it, what it kept on the host (a container). */
  async releaseNode(nodeId: string, nodeType?: string): Promise<void> {
    await this.swept;
    for (const [id, w] of [...this.links]) if (w.ends.some((e) => e.nodeId === nodeId)) await this.unwireLink(id);
    // Its container first (removed at once, where a stop waits for the command to end), then what ran around it.
    const taken = this.takeProcesses((id) => id === nodeId);
    const kept = nodeType === undefined ? allArtifacts() : [artifactsOf(nodeType)].filter((a) => a !== undefined);
    for (const a of kept) await a.remove(this.owner, { nodeId }).catch((e) => this.ctx.log.error("runtime: a node's host state was not removed", { node: nodeId, error: String(e) }));
    await this.finish(taken);
    const d = this.devices.get(nodeId);
    if (d) {
      this.devices.delete(nodeId);
      await d.device.close();
    }
  }

  /**
   * A new node of a type that keeps host state (a docker node's container): made now, as GNS3 makes it with the
   * node. Answers the properties to record (container_id); throws (409) when it cannot be made (a missing image).
   */
  async provisionNode(node: Node, workdir: string): Promise<Record<string, unknown> | undefined> {
    const artifacts = artifactsOf(node.nodeType);
    if (!artifacts) return undefined;
    await this.swept; // the sweep removes every container of this data directory
    return this.serial(`node:${node.id}`, () => artifacts.provision(node, { ctx: this.ctx, owner: this.owner, workdir }));
  }

  /**
   * The node changed (`changedKeys` of its properties, `renamed`): when its host state depends on that, it is made
   * again, and a running node is stopped before and started after (GNS3 recreates a container so).
   */
  async reprovisionNode(node: Node, workdir: string, changedKeys: readonly string[], renamed: boolean): Promise<Record<string, unknown> | undefined> {
    const artifacts = artifactsOf(node.nodeType);
    if (!artifacts?.needsNew(changedKeys, renamed)) return undefined;
    await this.swept;
    return this.serial(`node:${node.id}`, async () => {
      const wasRunning = this.isRunning(node.id);
      if (wasRunning) await this.stopProcess(node.id);
      const recorded = await artifacts.provision(node, { ctx: this.ctx, owner: this.owner, workdir });
      if (wasRunning) {
        const updated = { ...node, propertiesJson: JSON.stringify({ ...nodeProperties(node), ...recorded }) };
        await this.launch(driverFor(node.nodeType) as ProcessDriver, updated, workdir);
      }
      return recorded;
    });
  }

  private async removeArtifacts(scope: { projectId?: string }, done: string): Promise<void> {
    for (const a of allArtifacts()) {
      await a.remove(this.owner, scope).then(
        (removed) => removed && this.ctx.log.info(`runtime: ${done}`, { ...scope, removed }),
        (e) => this.ctx.log.info("runtime: host state not removed", { ...scope, error: String(e) }),
      );
    }
  }

  /** Project close/delete: stops its processes, tears down its links, captures and devices. One at a time per project. */
  async releaseProject(projectId: string): Promise<void> {
    await this.swept;
    return this.serial(`project:${projectId}`, () => this.releaseProjectNow(projectId));
  }

  private async releaseProjectNow(projectId: string): Promise<void> {
    // Links being wired right now (a cloud port's socat takes a moment) finish first, so that none is missed.
    const rows = await this.ctx.db.link.findMany({ where: { projectId }, select: { id: true } }).catch(() => []);
    for (const { id } of rows) await this.serial(`link:${id}`, async () => {});
    for (const [id, w] of [...this.links]) if (w.projectId === projectId) await this.unwireLink(id);
    const taken = this.takeProcesses((_id, project) => project === projectId);
    await this.removeArtifacts({ projectId }, "project's containers removed");
    await this.finish(taken);
    for (const [id, d] of [...this.devices]) {
      if (d.projectId !== projectId) continue;
      this.devices.delete(id);
      await d.device.close();
    }
  }

  /** After open or snapshot restore: drop what no longer exists, wire what does. */
  async reconcileProject(projectId: string): Promise<void> {
    const links = (await this.ctx.db.link.findMany({ where: { projectId }, include: { endpoints: true } })) as LinkRow[];
    const byId = new Map((await this.ctx.db.node.findMany({ where: { projectId } })).map((n) => [n.id, n]));
    const nodes = new Set(byId.keys());
    const live = new Set(links.map((l) => l.id));
    for (const [id, w] of [...this.links]) if (w.projectId === projectId && !live.has(id) && !id.startsWith(NIO_WIRE)) await this.unwireLink(id);
    for (const [id, p] of [...this.processes]) if (p.projectId === projectId && !nodes.has(id)) await this.releaseNode(id);
    for (const [id, d] of [...this.devices]) if (d.projectId === projectId && !nodes.has(id)) await this.releaseNode(id);
    // Wired RECONCILE_PARALLELISM at a time, from the rows read above (a 1,000-node project reopened: 1,166 links
    // one after another, a query and UDP probes each, held the server's start 1.5 s). One link that cannot be
    // carried (a cloud port whose interface is gone) leaves the others wired.
    const queue = [...links];
    const worker = async () => {
      for (let l = queue.shift(); l; l = queue.shift()) {
        const link = l;
        // Back to the event loop first: SQLite answers synchronously and port probes settle on the next tick, so
        // without it a project is wired in one turn of the loop and every request (the first after start) waits.
        await nextTurn();
        await this.serial(`link:${link.id}`, () => this.syncLinkRow(link.id, link, byId)).catch((e) =>
          this.ctx.log.error("runtime: link not wired", { project: projectId, link: link.id, error: String(e) }),
        );
      }
    };
    await Promise.all(Array.from({ length: RECONCILE_PARALLELISM }, worker));
  }

  /** Running nodes per node type (metrics): live processes, hubs and switches forwarding. Read-only. */
  runningByType(): Record<string, number> {
    const counts: Record<string, number> = {};
    const add = (type: string) => void (counts[type] = (counts[type] ?? 0) + 1);
    for (const p of this.processes.values()) if (p.proc.running) add(p.nodeType);
    for (const d of this.devices.values()) add(d.driver.nodeType);
    return counts;
  }

  /** What is running, for diagnostics and tests. */
  snapshot() {
    return {
      processes: [...this.processes].map(([nodeId, p]) => ({ nodeId, pids: p.proc.pids })),
      devices: [...this.devices.keys()],
      links: [...this.links.keys()],
      attachments: [...this.attachments].map(([port, a]) => ({ port, holders: [...a.holders], nodeLocal: a.nodeLocal, peer: a.peer })),
      udpPorts: this.pool.inUse,
    };
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sweepLeftovers(); // a start-up that failed before listening still kills what the last run left
    await this.ready.catch(() => {}); // let a recovery in progress finish before the database goes away
    for (const id of [...this.links.keys()]) await this.unwireNow(id);
    // As GNS3 closes its projects on shutdown: the containers go (a start makes them again), then the processes.
    const taken = this.takeProcesses(() => true);
    await this.removeArtifacts({}, "containers removed at shutdown");
    await this.finish(taken);
    for (const d of this.devices.values()) await d.device.close();
    this.devices.clear();
    await this.nat.stop();
    process.off("exit", this.exitHandler);
  }
}

function parseFilters(json: string): LinkFilters {
  try {
    const f = JSON.parse(json) as unknown;
    return f && typeof f === "object" ? (f as LinkFilters) : {};
  } catch {
    return {};
  }
}

export function ensureDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
}

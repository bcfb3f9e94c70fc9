import { randomUUID } from "node:crypto";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { Config } from "../../platform/config.js";
import type { Tx } from "../../platform/db/client.js";
import { BUILTIN_TYPES } from "../node-model/serialize.js";
import { buildTopology, type ComputeEntry, type TopologyDocument } from "./document.js";

type Reader = Pick<Tx, "node" | "link" | "drawing" | "compute">;

/** The project's topology as a .gns3 document, read from the database. */
export async function readTopology(db: Reader, project: Project): Promise<TopologyDocument> {
  const where = { projectId: project.id };
  const [nodes, links, drawings] = await Promise.all([
    db.node.findMany({ where, orderBy: { createdAt: "asc" } }),
    db.link.findMany({ where, orderBy: { createdAt: "asc" }, include: { endpoints: true } }),
    db.drawing.findMany({ where, orderBy: { createdAt: "asc" } }),
  ]);
  // Only remote computes are listed; "local" and "vm" are implicit in every GNS3 installation.
  const remoteIds = [...new Set(nodes.map((n) => n.computeId))].filter((id) => id !== "local" && id !== "vm");
  const computes: ComputeEntry[] = remoteIds.length
    ? (await db.compute.findMany({ where: { id: { in: remoteIds } } })).map((c) => ({
        compute_id: c.id,
        name: c.name,
        protocol: c.protocol,
        host: c.host,
        port: c.port,
      }))
    : [];
  return buildTopology(project, { nodes, links, drawings, computes });
}

/** Project settings carried by a .gns3 document (name, id and status are decided by the caller). */
export function projectSettings(doc: TopologyDocument) {
  const pick = <T>(key: string, ok: (v: unknown) => boolean, fallback: T): T => (ok(doc[key]) ? (doc[key] as T) : fallback);
  const bool = (v: unknown) => typeof v === "boolean";
  const int = (v: unknown) => Number.isInteger(v);
  return {
    autoStart: pick("auto_start", bool, false),
    autoOpen: pick("auto_open", bool, false),
    autoClose: pick("auto_close", bool, true),
    sceneHeight: pick("scene_height", int, 1000),
    sceneWidth: pick("scene_width", int, 2000),
    zoom: pick("zoom", int, 100),
    showLayers: pick("show_layers", bool, false),
    snapToGrid: pick("snap_to_grid", bool, false),
    showGrid: pick("show_grid", bool, false),
    gridSize: pick("grid_size", int, 75),
    drawingGridSize: pick("drawing_grid_size", int, 25),
    showInterfaceLabels: pick("show_interface_labels", bool, false),
    supplierJson: doc.supplier ? JSON.stringify(doc.supplier) : null,
    variablesJson: doc.variables ? JSON.stringify(doc.variables) : null,
  };
}

/**
 * A copy of the document with fresh node, link and drawing ids (import, duplicate), plus the node id mapping so
 * per-node directories (project-files/<type>/<node_id>) can follow.
 */
function regenerateIds(doc: TopologyDocument): { doc: TopologyDocument; nodeIds: Map<string, string> } {
  const nodeIds = new Map(doc.topology.nodes.map((n) => [n.node_id, randomUUID()]));
  const topology = {
    ...doc.topology,
    nodes: doc.topology.nodes.map((n) => ({ ...n, node_id: nodeIds.get(n.node_id)! })),
    links: doc.topology.links.map((l) => ({
      ...l,
      link_id: randomUUID(),
      nodes: l.nodes.map((e) => ({ ...e, node_id: nodeIds.get(e.node_id) ?? e.node_id })),
    })),
    drawings: doc.topology.drawings.map((d) => ({ ...d, drawing_id: randomUUID() })),
  };
  return { doc: { ...doc, topology }, nodeIds };
}

/** Inserting a large topology node by node can outlast Prisma's default 5 s interactive-transaction timeout. */
export const TOPOLOGY_TRANSACTION = { timeout: 60_000, maxWait: 10_000 };

/** GNS3's rule: an archive keeps its ids only when it is restored into the project it was taken from. */
export function idsForTarget(doc: TopologyDocument, projectId: string) {
  return doc.project_id === projectId ? { doc, nodeIds: new Map<string, string>() } : regenerateIds(doc);
}

const str = (v: unknown, fallback: string | null = null) => (typeof v === "string" ? v : fallback);
const int = (v: unknown, fallback: number) => (Number.isInteger(v) ? (v as number) : fallback);
const text = (v: unknown, fallback: unknown) => JSON.stringify(v ?? fallback);

/**
 * Creates the document's nodes, links and drawings in `projectId` with the document's ids. Nodes keep the
 * document's console ports without holding them: a caller that leaves the project open takes them with
 * holdProjectConsoles, which reassigns busy ones as a GNS3 compute does. Links that do not join two known nodes
 * on free ports are dropped (GNS3 deletes such dangling links when it opens a project). Nodes come back as
 * createNode makes them: builtins (hub, switch, cloud, …) started, the others stopped, the console on the
 * compute's host.
 */
export async function insertTopology(
  tx: Tx,
  projectId: string,
  doc: TopologyDocument,
  local: Pick<Config, "host">,
): Promise<void> {
  const consoleHost = await consoleHosts(tx, doc, local.host);
  // createMany in a few statements (a 600-node topology took 5-10 s row by row); createdAt keeps document order.
  const start = Date.now();
  const at = (i: number) => new Date(start + i);

  const nodes = new Set<string>();
  const nodeRows = [];
  for (const n of doc.topology.nodes) {
    if (nodes.has(n.node_id)) continue;
    nodes.add(n.node_id);
    const label = (n.label && typeof n.label === "object" ? n.label : {}) as Record<string, unknown>;
    nodeRows.push({
      id: n.node_id,
      projectId,
      computeId: n.compute_id,
      templateId: str(n.template_id),
      nodeType: n.node_type,
      name: n.name,
      console: Number.isInteger(n.console) ? (n.console as number) : null,
      consoleHost: consoleHost(n.compute_id),
      status: BUILTIN_TYPES.has(n.node_type) ? "started" : "stopped",
      consoleType: str(n.console_type),
      consoleAutoStart: n.console_auto_start === true,
      propertiesJson: text(n.properties, {}),
      labelJson: JSON.stringify({ ...label, text: n.name }),
      symbol: str(n.symbol),
      width: int(n.width, 65),
      height: int(n.height, 59),
      x: int(n.x, 0),
      y: int(n.y, 0),
      z: int(n.z, 1),
      locked: n.locked === true,
      portNameFormat: str(n.port_name_format, "Ethernet{0}")!,
      portSegmentSize: int(n.port_segment_size, 0),
      firstPortName: str(n.first_port_name),
      customAdapters: text(n.custom_adapters, []),
      createdAt: at(nodeRows.length),
    });
  }
  await tx.node.createMany({ data: nodeRows });

  const usedPorts = new Set<string>();
  const linkRows = [];
  const endpointRows = [];
  for (const l of doc.topology.links) {
    const ends = l.nodes;
    const keys = ends.map((e) => `${e.node_id}:${e.adapter_number}:${e.port_number}`);
    if (ends.length !== 2 || ends.some((e) => !nodes.has(e.node_id)) || keys.some((k) => usedPorts.has(k)) || keys[0] === keys[1]) continue;
    keys.forEach((k) => usedPorts.add(k));
    linkRows.push({
      id: l.link_id,
      projectId,
      filtersJson: text(l.filters, {}),
      linkStyleJson: text(l.link_style, {}),
      suspend: l.suspend === true,
      ...(typeof l.link_type === "string" ? { linkType: l.link_type } : {}),
      createdAt: at(linkRows.length),
    });
    endpointRows.push(
      ...ends.map((e, position) => ({
        linkId: l.link_id,
        position,
        nodeId: e.node_id,
        adapterNumber: e.adapter_number,
        portNumber: e.port_number,
        labelJson: text(e.label, {}),
      })),
    );
  }
  await tx.link.createMany({ data: linkRows });
  await tx.linkEndpoint.createMany({ data: endpointRows });

  await tx.drawing.createMany({
    data: doc.topology.drawings.map((d, i) => ({
      id: d.drawing_id,
      projectId,
      svg: d.svg,
      x: int(d.x, 0),
      y: int(d.y, 0),
      z: int(d.z, 2),
      locked: d.locked === true,
      rotation: int(d.rotation, 0),
      createdAt: at(i),
    })),
  });
}

/** The host a node's console is reached on: its remote compute's, else this server's. */
async function consoleHosts(tx: Tx, doc: TopologyDocument, localHost: string) {
  const computeIds = [...new Set(doc.topology.nodes.map((n) => n.compute_id))];
  const remote = await tx.compute.findMany({ where: { id: { in: computeIds } }, select: { id: true, host: true } });
  const hosts = new Map(remote.map((c) => [c.id, c.host]));
  return (computeId: string) => hosts.get(computeId) ?? localHost;
}

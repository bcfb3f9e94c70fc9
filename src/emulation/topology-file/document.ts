import { z } from "zod";
import { ConflictError } from "../../platform/core/errors.js";
import { UUID_PATTERN } from "../../platform/input.js";
import type { Drawing, Node, Project } from "../../generated/prisma-sqlite/client.js";
import { checkSvg, SvgRejected } from "../drawings/svg.js";
import { drawingToEntry } from "../drawings/serialize.js";
import { linkToTopology, type LinkWithEndpoints } from "../links/serialize.js";
import { nodeToTopology } from "../node-model/serialize.js";
import { GNS3_VERSION } from "../core/version.js";

/**
 * The .gns3 topology document (revision 9, GNS3 2.2). The database holds the topology; this document is how it
 * moves: export, import, snapshots, duplicate, load, and the <name>.gns3 file kept in the project directory.
 */
export const TOPOLOGY_REVISION = 9;

/** The largest .gns3 document read (a project's file when loaded, an archive's when imported). */
export const MAX_TOPOLOGY_BYTES = 64 * 1024 * 1024;

/** Ids and node types become directory names (project-files/<type>/<id>): only safe shapes are accepted. */
const id = z.string().regex(UUID_PATTERN, "not a UUID");

const nodeEntry = z.looseObject({
  node_id: id,
  node_type: z.string().regex(/^[a-z0-9_]+$/, "not a node type"),
  name: z.string().min(1),
  compute_id: z.string().default("local"),
});
const linkEntry = z.looseObject({
  link_id: id,
  nodes: z.array(
    z.looseObject({ node_id: id, adapter_number: z.number().int(), port_number: z.number().int(), label: z.unknown().optional() }),
  ),
});
/** A drawing from a file obeys the rules a drawing made through the API does. */
const safeSvg = z.string().superRefine((svg, issues) => {
  try {
    checkSvg(svg);
  } catch (e) {
    if (!(e instanceof SvgRejected)) throw e;
    issues.addIssue({ code: "custom", message: `Invalid SVG: ${e.message}` });
  }
});
const drawingEntry = z.looseObject({ drawing_id: id, svg: safeSvg });
const computeEntry = z.looseObject({ compute_id: z.string() });

const documentSchema = z.looseObject({
  project_id: id,
  type: z.literal("topology"),
  revision: z.number().int(),
  version: z.string(),
  name: z.string().min(1),
  topology: z.looseObject({
    nodes: z.array(nodeEntry),
    links: z.array(linkEntry),
    drawings: z.array(drawingEntry),
    computes: z.array(computeEntry),
  }),
});

export type TopologyDocument = z.infer<typeof documentSchema>;
export type NodeEntry = z.infer<typeof nodeEntry>;
export type LinkEntry = z.infer<typeof linkEntry>;
export type DrawingEntry = z.infer<typeof drawingEntry>;

/** Validates a parsed .gns3 document; ConflictError (409) names what is wrong. */
export function parseTopology(json: unknown): TopologyDocument {
  const revision = (json as { revision?: unknown } | null)?.revision;
  if (typeof revision === "number" && revision > TOPOLOGY_REVISION) {
    throw new ConflictError(
      `This project was created with more recent version of GNS3 (file revision: ${revision}). Please upgrade GNS3 to version ${GNS3_VERSION} or higher.`,
    );
  }
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConflictError(`Invalid topology file: ${issue.path.join(".") || "document"}: ${issue.message}`);
  }
  return parsed.data;
}

const json = (text: string | null, fallback: unknown) => (text === null ? fallback : JSON.parse(text));

export type ComputeEntry = { compute_id: string; name: string; protocol: string; host: string; port: number };

export function buildTopology(
  project: Project,
  rows: { nodes: Node[]; links: LinkWithEndpoints[]; drawings: Drawing[]; computes: ComputeEntry[] },
): TopologyDocument {
  return {
    project_id: project.id,
    name: project.name,
    type: "topology",
    revision: TOPOLOGY_REVISION,
    version: GNS3_VERSION,
    auto_start: project.autoStart,
    auto_open: project.autoOpen,
    auto_close: project.autoClose,
    scene_width: project.sceneWidth,
    scene_height: project.sceneHeight,
    zoom: project.zoom,
    show_layers: project.showLayers,
    snap_to_grid: project.snapToGrid,
    show_grid: project.showGrid,
    grid_size: project.gridSize,
    drawing_grid_size: project.drawingGridSize,
    show_interface_labels: project.showInterfaceLabels,
    supplier: json(project.supplierJson, null),
    variables: json(project.variablesJson, null),
    topology: {
      nodes: rows.nodes.map(nodeToTopology),
      links: rows.links.map(linkToTopology),
      drawings: rows.drawings.map(drawingToEntry),
      computes: rows.computes,
    },
  };
}

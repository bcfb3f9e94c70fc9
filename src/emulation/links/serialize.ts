import type { Link, LinkEndpoint } from "../../generated/prisma-sqlite/client.js";
import type { LinkData } from "../core/events.js";

export type LinkWithEndpoints = Link & { endpoints: LinkEndpoint[] };

const parse = (json: string): Record<string, unknown> => {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return {};
  }
};

function endpoints(link: LinkData) {
  return [...link.endpoints]
    .sort((a, b) => a.position - b.position)
    .map((e) => ({ adapter_number: e.adapterNumber, label: parse(e.labelJson), node_id: e.nodeId, port_number: e.portNumber }));
}

/** The link as stored in the .gns3 topology file (also what GET P/links lists for a closed project). */
export function linkToTopology(link: LinkData) {
  return {
    filters: parse(link.filtersJson),
    link_id: link.id,
    link_style: parse(link.linkStyleJson),
    nodes: endpoints(link),
    suspend: link.suspend,
  };
}

/** The GNS3 v2 REST link object (responses and link.* events). */
export function linkToRest(link: LinkData) {
  return {
    ...linkToTopology(link),
    capture_compute_id: link.captureComputeId,
    capture_file_name: link.captureFileName,
    capture_file_path: link.captureFilePath,
    capturing: link.capturing,
    link_type: link.linkType,
    project_id: link.projectId,
  };
}

import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { labelSchema, uuidSchema } from "../nodes/rest.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { FILTER_NAMES } from "./filters.js";
import { availableFilters, createLink, deleteLink, getLink, listLinks, updateLink, type NewLink } from "./operations.js";
import { linkToRest, linkToTopology } from "./serialize.js";

const endpointSchema = z.strictObject({
  node_id: uuidSchema,
  adapter_number: z.int(),
  port_number: z.int(),
  label: labelSchema.optional(),
});

/** GNS3's link object schema; the capture columns and link_type are read-only (accepted, ignored). */
const linkSchema = z.strictObject({
  link_id: uuidSchema.optional(),
  project_id: uuidSchema.optional(),
  nodes: z.array(endpointSchema).max(2).optional(),
  filters: z.partialRecord(z.enum(FILTER_NAMES), z.array(z.union([z.int(), z.string()]))).optional(),
  link_style: z.strictObject({ color: z.string().optional(), width: z.int().optional(), type: z.int().optional() }).optional(),
  suspend: z.boolean().optional(),
  capturing: z.boolean().optional(),
  capture_file_name: z.string().nullable().optional(),
  capture_file_path: z.string().nullable().optional(),
  capture_compute_id: z.string().nullable().optional(),
  link_type: z.enum(["ethernet", "serial"]).optional(),
});
type LinkBody = z.infer<typeof linkSchema>;

const toInput = (b: LinkBody): NewLink => ({
  linkId: b.link_id,
  filters: b.filters as NewLink["filters"],
  linkStyle: b.link_style,
  suspend: b.suspend,
  nodes: b.nodes?.map((n) => ({ nodeId: n.node_id, adapterNumber: n.adapter_number, portNumber: n.port_number, label: n.label })),
});

const P = "/v2/projects/{project_id}/links";
const L = `${P}/{link_id}`;

export function linkRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("POST", P, async ({ res, params, body }) => sendJson(res, 201, linkToRest(await createLink(ctx, params.project_id, toInput(body)))), {
    schema: linkSchema,
  });
  routes.add("GET", P, async ({ res, params }) => {
    const { project, links } = await listLinks(ctx, params.project_id);
    sendJson(res, 200, links.map(project.status === "opened" ? linkToRest : linkToTopology));
  });
  routes.add("GET", L, async ({ res, params }) => sendJson(res, 200, linkToRest(await getLink(ctx, params.project_id, params.link_id))));
  // GNS3 answers a link update with 201.
  routes.add(
    "PUT",
    L,
    async ({ res, params, body }) => {
      const { linkId: _ignored, ...changes } = toInput(body);
      sendJson(res, 201, linkToRest(await updateLink(ctx, params.project_id, params.link_id, changes)));
    },
    { schema: linkSchema },
  );
  routes.add("DELETE", L, async ({ res, params }) => {
    await deleteLink(ctx, params.project_id, params.link_id);
    res.status(204).end();
  });
  routes.add("GET", `${L}/available_filters`, async ({ res, params }) => sendJson(res, 200, await availableFilters(ctx, params.project_id, params.link_id)));
}

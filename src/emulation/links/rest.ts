import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { uuidSchema } from "../../platform/input.js";
import { wireLabelSchema } from "../nodes/rest.js";
import { viewTag } from "../../platform/read-views.js";
import { gns3Bytes, sendJson, sendJsonBytes, type Gns3Routes } from "../rest/kit.js";
import { availableFilters, createLink, deleteLink, getLink, listLinks, listNodeLinks, updateLink } from "./operations.js";
import { linkEndFields, linkFields, type NewLink } from "./schema.js";
import { linkToRest, linkToTopology } from "./serialize.js";

const end = linkEndFields;
const endpointSchema = z.strictObject({
  node_id: end.nodeId,
  adapter_number: end.adapterNumber,
  port_number: end.portNumber,
  label: wireLabelSchema.optional(),
});

const f = linkFields;
/** GNS3's link object schema over the domain's field rules; the capture columns and link_type are read-only (accepted, ignored). */
const linkSchema = z.strictObject({
  link_id: f.linkId.optional(),
  project_id: uuidSchema.optional(),
  nodes: z.array(endpointSchema).max(2).optional(),
  filters: f.filters.optional(),
  link_style: f.linkStyle.optional(),
  suspend: f.suspend.optional(),
  capturing: z.boolean().optional(),
  capture_file_name: z.string().nullable().optional(),
  capture_file_path: z.string().nullable().optional(),
  capture_compute_id: z.string().nullable().optional(),
  link_type: z.enum(["ethernet", "serial"]).optional(),
});
type LinkBody = z.infer<typeof linkSchema>;

/** The wire body in domain terms (the operation parses it with the link's input contract). */
const toInput = (b: LinkBody): NewLink => ({
  linkId: b.link_id,
  filters: b.filters,
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
    const body = await ctx.services.emulation.reads.view(params.project_id, "links", async () => {
      const { project, links } = await listLinks(ctx, params.project_id);
      return gns3Bytes(links.map(project.status === "opened" ? linkToRest : linkToTopology));
    });
    sendJsonBytes(res, 200, body, viewTag(body));
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
  // The links of one node, under the node's path.
  routes.add("GET", "/v2/projects/{project_id}/nodes/{node_id}/links", async ({ res, params }) => {
    sendJson(res, 200, (await listNodeLinks(ctx, params.project_id, params.node_id)).map(linkToRest));
  });
}

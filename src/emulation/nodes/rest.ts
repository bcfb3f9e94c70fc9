import { pipeline } from "node:stream/promises";
import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { uuidSchema } from "../../platform/input.js";
import { viewTag } from "../../platform/read-views.js";
import { projectDir } from "../projects/serialize.js";
import { gns3Bytes, readRawBody, sendJson, sendJsonBytes, type Gns3Routes } from "../rest/kit.js";
import { resetNodeConsole, resetProjectConsoles } from "./console-reset.js";
import { duplicateNode } from "./duplicate.js";
import { openNodeFile, writeNodeFile } from "./files.js";
import { createNode, deleteNode, getNode, listNodes, restNode, updateNode } from "./operations.js";
import { nodeToRest, nodeToTopology } from "../node-model/serialize.js";
import { labelFields, nodeFields, type NodeChanges } from "./schema.js";
import { NODE_STATUSES } from "../node-model/vocabularies.js";

/** GNS3's label object on the wire: the text is required and nothing else is accepted. */
export const wireLabelSchema = z.strictObject({ ...labelFields, text: z.string() });

const f = nodeFields;
/** GNS3's node object schema over the domain's field rules; read-only keys are accepted (the schema lists them) and ignored. */
const wireFields = {
  compute_id: f.computeId,
  project_id: uuidSchema.optional(),
  node_id: f.nodeId.optional(),
  template_id: f.templateId.optional(),
  node_type: f.nodeType,
  node_directory: z.string().nullable().optional(),
  command_line: z.string().nullable().optional(),
  name: f.name,
  console: f.console.optional(),
  console_host: z.string().min(1).optional(),
  console_type: f.consoleType.optional(),
  console_auto_start: f.consoleAutoStart.optional(),
  properties: f.properties.optional(),
  status: z.enum(NODE_STATUSES).optional(),
  label: wireLabelSchema.optional(),
  symbol: f.symbol.optional(),
  width: z.int().optional(),
  height: z.int().optional(),
  x: f.x.optional(),
  y: f.y.optional(),
  z: f.z.optional(),
  locked: f.locked.optional(),
  port_name_format: f.portNameFormat.optional(),
  port_segment_size: f.portSegmentSize.optional(),
  first_port_name: f.firstPortName.optional(),
  custom_adapters: f.customAdapters.optional(),
  ports: z.array(z.record(z.string(), z.unknown())).optional(),
};
const createSchema = z.strictObject(wireFields);
const updateSchema = z.strictObject(wireFields).partial();
type NodeBody = z.infer<typeof updateSchema>;

/** The wire body in domain terms (the operation parses it with the node's input contract). */
function toChanges(b: NodeBody): NodeChanges {
  return {
    name: b.name,
    templateId: b.template_id,
    console: b.console,
    consoleType: b.console_type,
    consoleAutoStart: b.console_auto_start,
    properties: b.properties,
    label: b.label,
    symbol: b.symbol,
    x: b.x,
    y: b.y,
    z: b.z,
    locked: b.locked,
    portNameFormat: b.port_name_format,
    portSegmentSize: b.port_segment_size,
    firstPortName: b.first_port_name,
    customAdapters: b.custom_adapters,
  };
}

const P = "/v2/projects/{project_id}/nodes";
const N = `${P}/{node_id}`;

export function nodeRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add(
    "POST",
    P,
    async ({ res, params, body }) => {
      const b = body as z.infer<typeof createSchema>;
      const node = await createNode(ctx, params.project_id, { ...toChanges(b), name: b.name, nodeType: b.node_type, computeId: b.compute_id, nodeId: b.node_id });
      sendJson(res, 201, await restNode(ctx, node));
    },
    { schema: createSchema },
  );
  routes.add("GET", P, async ({ res, params }) => {
    const body = await ctx.services.emulation.reads.view(params.project_id, "nodes", async () => {
      const { project, nodes } = await listNodes(ctx, params.project_id);
      const dir = projectDir(ctx, project);
      return gns3Bytes(nodes.map((n) => (project.status === "opened" ? nodeToRest(n, dir) : nodeToTopology(n))));
    });
    sendJsonBytes(res, 200, body, viewTag(body));
  });
  routes.add("GET", N, async ({ res, params }) => sendJson(res, 200, await restNode(ctx, await getNode(ctx, params.project_id, params.node_id))));
  routes.add(
    "PUT",
    N,
    async ({ res, params, body }) => sendJson(res, 200, await restNode(ctx, await updateNode(ctx, params.project_id, params.node_id, toChanges(body)))),
    { schema: updateSchema },
  );
  routes.add("DELETE", N, async ({ res, params }) => {
    await deleteNode(ctx, params.project_id, params.node_id);
    res.status(204).end();
  });
  routes.add(
    "POST",
    `${N}/duplicate`,
    async ({ res, params, body }) => sendJson(res, 201, await restNode(ctx, await duplicateNode(ctx, params.project_id, params.node_id, body))),
    { schema: z.strictObject({ x: z.int(), y: z.int(), z: z.int().optional() }) },
  );
  routes.add("POST", `${P}/console/reset`, async ({ res, params }) => {
    await resetProjectConsoles(ctx, params.project_id);
    res.status(204).end();
  });
  routes.add("POST", `${N}/console/reset`, async ({ res, params }) => {
    await resetNodeConsole(ctx, params.project_id, params.node_id);
    res.status(204).end();
  });
  routes.add("GET", `${N}/files/{path:.+}`, async ({ res, params, tail }) => {
    const stream = await openNodeFile(ctx, params.project_id, params.node_id, tail ?? "");
    res.status(200).type("application/octet-stream");
    await pipeline(stream, res);
  });
  routes.add(
    "POST",
    `${N}/files/{path:.+}`,
    async ({ req, res, params, tail }) => {
      await writeNodeFile(ctx, params.project_id, params.node_id, tail ?? "", await readRawBody(req, res, ctx.config.uploadLimit));
      res.status(201).end();
    },
    { raw: true },
  );
}

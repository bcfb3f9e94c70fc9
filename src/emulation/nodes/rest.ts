import { pipeline } from "node:stream/promises";
import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { linkToRest } from "../links/serialize.js";
import { listNodeLinks } from "../links/operations.js";
import { projectDir } from "../projects/serialize.js";
import { readRawBody, sendJson, type Gns3Routes } from "../rest/kit.js";
import { openNodeFile, writeNodeFile } from "./files.js";
import { createNode, deleteNode, getNode, listNodes, restNode, updateNode } from "./operations.js";
import { nodeToRest, nodeToTopology } from "./serialize.js";
import { CONSOLE_TYPES, NODE_STATUSES, NODE_TYPES, type NodeChanges } from "./types.js";

export const uuidSchema = z
  .string()
  .min(36)
  .max(36)
  .regex(/^[a-fA-F0-9]{8}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{4}-[a-fA-F0-9]{12}$/);

export const labelSchema = z.strictObject({
  text: z.string(),
  style: z.string().nullable().optional(),
  x: z.int().nullable().optional(),
  y: z.int().optional(),
  rotation: z.int().min(-359).max(360).optional(),
});

/** GNS3's node object schema; read-only keys are accepted (the schema lists them) and ignored. */
const nodeFields = {
  compute_id: z.string(),
  project_id: uuidSchema.optional(),
  node_id: uuidSchema.optional(),
  template_id: uuidSchema.nullable().optional(),
  node_type: z.enum(NODE_TYPES),
  node_directory: z.string().nullable().optional(),
  command_line: z.string().nullable().optional(),
  name: z.string().min(1),
  console: z.int().min(1).max(65535).nullable().optional(),
  console_host: z.string().min(1).optional(),
  console_type: z.enum(CONSOLE_TYPES).nullable().optional(),
  console_auto_start: z.boolean().optional(),
  properties: z.record(z.string(), z.unknown()).optional(),
  status: z.enum(NODE_STATUSES).optional(),
  label: labelSchema.optional(),
  symbol: z.string().min(1).nullable().optional(),
  width: z.int().optional(),
  height: z.int().optional(),
  x: z.int().optional(),
  y: z.int().optional(),
  z: z.int().optional(),
  locked: z.boolean().optional(),
  port_name_format: z.string().optional(),
  port_segment_size: z.int().min(0).optional(),
  first_port_name: z.string().nullable().optional(),
  custom_adapters: z.array(z.record(z.string(), z.unknown())).optional(),
  ports: z.array(z.record(z.string(), z.unknown())).optional(),
};
const createSchema = z.strictObject(nodeFields);
const updateSchema = z.strictObject(nodeFields).partial();
type NodeBody = z.infer<typeof updateSchema>;

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
    const { project, nodes } = await listNodes(ctx, params.project_id);
    const dir = projectDir(ctx, project);
    sendJson(res, 200, nodes.map((n) => (project.status === "opened" ? nodeToRest(n, dir) : nodeToTopology(n))));
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
  routes.add("GET", `${N}/links`, async ({ res, params }) => {
    sendJson(res, 200, (await listNodeLinks(ctx, params.project_id, params.node_id)).map(linkToRest));
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

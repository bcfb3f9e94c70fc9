import { createHash } from "node:crypto";
import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { restNode } from "../nodes/operations.js";
import { pythonJsonLine } from "../rest/json.js";
import { sendJson, validate, type Gns3Routes } from "../rest/kit.js";
import { listAppliances } from "./appliances.js";
import { baseTemplateSchema, templateSchema } from "./builtin.js";
import {
  createNodeFromTemplate,
  createTemplate,
  deleteTemplate,
  duplicateTemplate,
  getTemplate,
  listTemplates,
  updateTemplate,
} from "./operations.js";

const T = "/v2/templates/{template_id}";

const nodeFromTemplateSchema = z.strictObject({
  x: z.int(),
  y: z.int(),
  name: z.string().min(1).nullable().optional(),
  compute_id: z.string().min(1).nullable().optional(),
});

/** GNS3's template ETag: the md5 of the template as Python's json.dumps(sort_keys=True) writes it. */
const etag = (template: object) => `"${createHash("md5").update(pythonJsonLine(template)).digest("hex")}"`;

export function templateRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", "/v2/templates", async ({ res }) => sendJson(res, 200, await listTemplates(ctx)));
  // Validated here too, only to word a refusal like GNS3's jsonschema; the operation applies the same rules.
  routes.add("POST", "/v2/templates", async ({ req, res, body }) => {
    const { template_type } = validate(baseTemplateSchema, body, req);
    sendJson(res, 201, await createTemplate(ctx, validate(templateSchema(template_type), body, req)));
  });
  routes.add("GET", T, async ({ req, res, params }) => {
    const template = await getTemplate(ctx, params.template_id);
    const tag = etag(template);
    res.setHeader("ETag", tag);
    if (req.get("If-None-Match") === tag) return void res.status(304).end();
    sendJson(res, 200, template);
  });
  routes.add("PUT", T, async ({ req, res, params, body }) => {
    const current = await getTemplate(ctx, params.template_id);
    if (!current.builtin) validate(templateSchema(current.template_type).partial(), body, req);
    sendJson(res, 200, await updateTemplate(ctx, params.template_id, body));
  });
  routes.add("DELETE", T, async ({ res, params }) => {
    await deleteTemplate(ctx, params.template_id);
    res.status(204).end();
  });
  routes.add("POST", `${T}/duplicate`, async ({ res, params }) => sendJson(res, 201, await duplicateTemplate(ctx, params.template_id)));

  routes.add(
    "POST",
    "/v2/projects/{project_id}/templates/{template_id}",
    async ({ res, params, body }) => {
      const b = body as z.infer<typeof nodeFromTemplateSchema>;
      const node = await createNodeFromTemplate(ctx, params.project_id, params.template_id, { x: b.x, y: b.y, name: b.name, computeId: b.compute_id });
      sendJson(res, 201, await restNode(ctx, node));
    },
    { schema: nodeFromTemplateSchema },
  );

  routes.add("GET", "/v2/appliances", ({ res }) => sendJson(res, 200, listAppliances()));
}

import { batchLoad, eachFound } from "../../platform/graphql/batch-load.js";
import { builder } from "../../platform/graphql/builder.js";
import { Template } from "./graphql.js";
import { getTemplate } from "./operations.js";

/**
 * `EmulatedNode.template`, defined here because templates build on nodes (a template makes nodes), not the other
 * way round: nodes/ does not import templates/.
 */
builder.prismaObjectField("Node", "template", (t) =>
  t.field({
    type: Template,
    nullable: true,
    description: "The template the node was made from (null: none, or it has been deleted since)",
    select: { templateId: true },
    // One read per distinct template for a whole list of nodes.
    resolve: async (n, _a, ctx) =>
      n.templateId ? ((await batchLoad(ctx, "Node.template", null, n.templateId, eachFound((id) => getTemplate(ctx, id)), (x) => x.template_id))[0] ?? null) : null,
  }),
);

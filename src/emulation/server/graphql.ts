import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { getSettings, updateSettings } from "./settings.js";

builder.queryField("settings", (t) =>
  t.field({
    type: "JSON",
    description: "The GUI's free-form settings document (GNS3 2.1 /v2/settings)",
    resolve: (_root, _args, ctx) => getSettings(ctx),
  }),
);

builder.mutationField("updateSettings", (t) =>
  t.field({
    type: "JSON",
    description: "Replaces the settings document; the server adds a fresh modification_uuid",
    errors: { types: DOMAIN_ERRORS },
    args: { settings: t.arg({ type: "JSON", required: true }) },
    resolve: (_root, args, ctx) => updateSettings(ctx, args.settings),
  }),
);

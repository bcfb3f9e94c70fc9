import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { checkClientVersion, GNS3_VERSION } from "../core/version.js";
import { shutdownServer, writeDebugBundle } from "./debug.js";
import { getIouLicense, updateIouLicense, type IouLicense } from "./iou-license.js";
import { getSettings, updateSettings } from "./settings.js";

const EmulationServer = builder.objectRef<{ version: string; local: boolean }>("EmulationServer").implement({
  description: "What GET /v2/version tells a client: the GNS3 version served and whether this is a local server",
  fields: (t) => ({
    version: t.exposeString("version"),
    local: t.exposeBoolean("local", { description: "Local servers allow debug, shutdown and loading projects from a path" }),
  }),
});

const IouLicenseRef = builder.objectRef<IouLicense>("IouLicense").implement({
  description: "The IOU license settings (GNS3's /v2/iou_license), kept for clients: this server runs no IOU",
  fields: (t) => ({
    iourcContent: t.exposeString("iourc_content", { description: "The content of the iourc file" }),
    licenseCheck: t.exposeBoolean("license_check", { description: "Whether IOU checks the license" }),
  }),
});

const IouLicenseInput = builder.inputType("IouLicenseInput", {
  description: "Only the fields given change",
  fields: (t) => ({ iourcContent: t.string(), licenseCheck: t.boolean() }),
});

builder.queryFields((t) => ({
  emulationServer: t.field({ type: EmulationServer, resolve: (_r, _a, ctx) => ({ version: GNS3_VERSION, local: ctx.config.local }) }),
  checkEmulationVersion: t.field({
    type: "String",
    description: "The server version when the client's is the same, else a ConflictError (POST /v2/version)",
    errors: { types: DOMAIN_ERRORS },
    args: { version: t.arg.string({ required: true }) },
    resolve: (_r, args) => checkClientVersion(args.version),
  }),
  settings: t.field({
    type: "JSON",
    description: "The GUI's free-form settings document (GNS3 2.1 /v2/settings)",
    resolve: (_root, _args, ctx) => getSettings(ctx),
  }),
  iouLicense: t.field({ type: IouLicenseRef, resolve: (_r, _a, ctx) => getIouLicense(ctx) }),
}));

builder.mutationFields((t) => ({
  updateSettings: t.field({
    type: "JSON",
    description: "Replaces the settings document; the server adds a fresh modification_uuid",
    errors: { types: DOMAIN_ERRORS },
    args: { settings: t.arg({ type: "JSON", required: true }) },
    resolve: (_root, args, ctx) => updateSettings(ctx, args.settings),
  }),
  updateIouLicense: t.field({
    type: IouLicenseRef,
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: IouLicenseInput, required: true }) },
    // Absent fields stay absent so the operation merges; an explicit null is refused by its schema.
    resolve: (_r, { input }, ctx) =>
      updateIouLicense(ctx, {
        ...(input.iourcContent !== undefined && { iourc_content: input.iourcContent }),
        ...(input.licenseCheck !== undefined && { license_check: input.licenseCheck }),
      }),
  }),
  writeDebugBundle: t.field({
    type: "String",
    description: "Writes a support bundle (no secrets) and returns its path; ForbiddenError unless the server is local",
    errors: { types: DOMAIN_ERRORS },
    resolve: (_r, _a, ctx) => writeDebugBundle(ctx),
  }),
  shutdownServer: t.field({
    type: "Boolean",
    description: "Closes every opened project, then stops the server; ForbiddenError unless the server is local",
    errors: { types: DOMAIN_ERRORS },
    resolve: async (_r, _a, ctx) => {
      await shutdownServer(ctx);
      return true;
    },
  }),
}));

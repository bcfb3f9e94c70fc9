import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { checkClientVersion, GNS3_VERSION } from "../core/version.js";
import { shutdownServer, writeDebugBundle } from "./debug.js";
import { getIouLicense, updateIouLicense, type IouLicense } from "./iou-license.js";
import { getSettings, updateSettings } from "./settings.js";

const EmulationServer = builder.objectRef<{ version: string; local: boolean }>("EmulationServer").implement({
  description: "The emulation server itself: the GNS3 version it speaks and whether it is a local server",
  fields: (t) => ({
    version: t.exposeString("version", { description: "The GNS3 version this server is compatible with (a client must match it)" }),
    local: t.exposeBoolean("local", { description: "Local servers allow debug, shutdown and loading projects from a path" }),
  }),
});

const IouLicenseRef = builder.objectRef<IouLicense>("IouLicense").implement({
  description: "The IOU license settings, kept for clients: this server runs no IOU",
  fields: (t) => ({
    iourcContent: t.exposeString("iourc_content", { description: "The content of the iourc file" }),
    licenseCheck: t.exposeBoolean("license_check", { description: "Whether IOU checks the license" }),
  }),
});

const IouLicenseInput = builder.inputType("IouLicenseInput", {
  description: "Only the fields given change",
  fields: (t) => ({
    iourcContent: t.string({ description: "The content of the iourc file" }),
    licenseCheck: t.boolean({ description: "Whether IOU checks the license" }),
  }),
});

builder.queryFields((t) => ({
  emulationServer: t.field({ type: EmulationServer, description: "The emulation server: its GNS3 version and whether it is local", resolve: (_r, _a, ctx) => ({ version: GNS3_VERSION, local: ctx.config.local }) }),
  checkEmulationVersion: t.field({
    type: "String",
    description: "The server version when the client's is the same, else a ConflictError: a GNS3 client checks this before it goes on",
    errors: { types: DOMAIN_ERRORS },
    args: { version: t.arg.string({ required: true, description: "The client's GNS3 version (2.2.x)" }) },
    resolve: (_r, args) => checkClientVersion(args.version),
  }),
  settings: t.field({
    type: "JSON",
    description: "The GUI's free-form settings document (preferences a GNS3 GUI saves on the server)",
    resolve: (_root, _args, ctx) => getSettings(ctx),
  }),
  iouLicense: t.field({ type: IouLicenseRef, description: "The IOU license settings", resolve: (_r, _a, ctx) => getIouLicense(ctx) }),
}));

builder.mutationFields((t) => ({
  updateSettings: t.field({
    type: "JSON",
    description: "Replaces the settings document; the server adds a fresh modification_uuid",
    errors: { types: DOMAIN_ERRORS },
    args: { settings: t.arg({ type: "JSON", required: true, description: "The whole new settings document" }) },
    resolve: (_root, args, ctx) => updateSettings(ctx, args.settings),
  }),
  updateIouLicense: t.field({
    type: IouLicenseRef,
    description: "Changes the IOU license settings; the settings as they now are",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: IouLicenseInput, required: true, description: "The changes" }) },
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

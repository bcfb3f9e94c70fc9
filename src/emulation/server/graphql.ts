import { ConflictError, ForbiddenError, InvalidInputError, UnavailableError, UpstreamError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { globalId } from "../../platform/graphql/global-id.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
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

const UpdateIouLicenseInput = builder.inputType("UpdateIouLicenseInput", {
  description: "Changes to the IOU license settings: only the fields given change",
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
    errors: { types: [ConflictError], directResult: false },
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

const UpdateSettingsInput = builder.inputType("UpdateSettingsInput", {
  description: "The GUI's new settings document",
  fields: (t) => ({ settings: t.field({ type: "JSON", required: true, description: "The whole new settings document (a JSON object; it replaces the current one)" }) }),
});

builder.mutationFields((t) => ({
  updateSettings: t.field({
    type: payloadType<{ settings: unknown }>("updateSettings", "What `updateSettings` changed: the settings document", (f) => ({
      settings: f.field({ type: "JSON", description: "The settings document as saved, with its fresh modification_uuid", resolve: (p) => p.settings }),
    })),
    description: "Replaces the GUI's settings document; the server adds a fresh modification_uuid",
    errors: mutationErrors("updateSettings", [InvalidInputError]),
    args: { input: t.arg({ type: UpdateSettingsInput, required: true, description: "The new document" }) },
    resolve: async (_root, { input }, ctx) => ({ settings: await updateSettings(ctx, input.settings) }),
  }),
  updateIouLicense: t.field({
    type: payloadType<{ iouLicense: IouLicense }>("updateIouLicense", "What `updateIouLicense` changed: the IOU license settings", (f) => ({
      iouLicense: f.field({ type: IouLicenseRef, description: "The IOU license settings as they now are", resolve: (p) => p.iouLicense }),
    })),
    description: "Changes the IOU license settings",
    errors: mutationErrors("updateIouLicense", [InvalidInputError]),
    args: { input: t.arg({ type: UpdateIouLicenseInput, required: true, description: "The changes" }) },
    // Absent fields stay absent so the operation merges; an explicit null is refused by its schema.
    resolve: async (_r, { input }, ctx) => ({
      iouLicense: await updateIouLicense(ctx, {
        ...(input.iourcContent !== undefined && { iourc_content: input.iourcContent }),
        ...(input.licenseCheck !== undefined && { license_check: input.licenseCheck }),
      }),
    }),
  }),
  // These two act on the server itself and take nothing: no argument at all (GraphQL has no empty input type).
  writeDebugBundle: t.field({
    type: payloadType<{ path: string }>("writeDebugBundle", "What `writeDebugBundle` wrote: the support bundle", (f) => ({
      path: f.exposeString("path", { description: "Where the bundle was written on this server" }),
    })),
    description: "Writes a support bundle (no secrets); ForbiddenError unless the server is local",
    errors: mutationErrors("writeDebugBundle", [ForbiddenError]),
    resolve: async (_r, _a, ctx) => ({ path: await writeDebugBundle(ctx) }),
  }),
  shutdownServer: t.field({
    type: payloadType<{ closedProjectIds: string[] }>("shutdownServer", "What `shutdownServer` did before the server stops: the projects it closed", (f) => ({
      closedProjectIds: f.idList({ description: "The global ids of the projects it closed (their nodes stopped, their topology saved)", resolve: (p) => p.closedProjectIds }),
    })),
    description: "Closes every opened project, then stops the server; ForbiddenError unless the server is local",
    // Closing projects stops their nodes, which may be on remote computes.
    errors: mutationErrors("shutdownServer", [ForbiddenError, ConflictError, UnavailableError, UpstreamError]),
    resolve: async (_r, _a, ctx) => ({ closedProjectIds: (await shutdownServer(ctx)).map((id) => globalId("Project", id)) }),
  }),
}));

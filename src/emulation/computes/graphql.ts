import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import type { Capabilities, Compute } from "./model.js";
import { PROTOCOLS } from "./schema.js";
import { createCompute, deleteCompute, getCompute, listComputes, updateCompute } from "./operations.js";
import type { NewCompute } from "./schema.js";

const ComputeProtocol = builder.enumType("ComputeProtocol", {
  values: Object.fromEntries(PROTOCOLS.map((p) => [p.toUpperCase(), { value: p }])) as { HTTP: { value: "http" }; HTTPS: { value: "https" } },
});

const ComputeCapabilities = builder.objectRef<Capabilities>("ComputeCapabilities").implement({
  fields: (t) => ({
    version: t.string({ nullable: true, description: "Null until the compute has answered", resolve: (c) => c.version }),
    nodeTypes: t.stringList({ resolve: (c) => c.node_types }),
    platform: t.string({ nullable: true, resolve: (c) => c.platform ?? null }),
  }),
});

export const ComputeRef = builder.objectRef<Compute>("Compute").implement({
  description: "A server that runs nodes: this server (id local) or a remote one. The password is write-only.",
  fields: (t) => ({
    id: t.exposeString("compute_id"),
    name: t.exposeString("name"),
    protocol: t.field({ type: ComputeProtocol, resolve: (c) => c.protocol }),
    host: t.exposeString("host"),
    port: t.exposeInt("port"),
    user: t.exposeString("user", { nullable: true }),
    connected: t.exposeBoolean("connected"),
    cpuUsagePercent: t.exposeFloat("cpu_usage_percent", { nullable: true }),
    memoryUsagePercent: t.exposeFloat("memory_usage_percent", { nullable: true }),
    lastError: t.exposeString("last_error", { nullable: true }),
    capabilities: t.field({ type: ComputeCapabilities, resolve: (c) => c.capabilities }),
  }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The connection fields, shared by both inputs: required on create, optional on update. */
const fields = (required: boolean) => (t: PothosSchemaTypes.InputFieldBuilder<Types, "InputObject">) => ({
  name: t.string({ required: false }),
  protocol: t.field({ type: ComputeProtocol, required }),
  host: t.string({ required }),
  port: t.int({ required }),
  user: t.string({ required: false }),
  password: t.string({ required: false, description: "Write-only: stored sealed, never returned" }),
});

const CreateComputeInput = builder.inputType("CreateComputeInput", {
  fields: (t) => ({ id: t.string({ required: false, description: "Chosen by the server when absent" }), ...fields(true)(t) }),
});
const UpdateComputeInput = builder.inputType("UpdateComputeInput", {
  description: "Only the fields given change; password null removes it",
  fields: fields(false),
});

/** GraphQL input onto the compute's input contract; absent stays absent, null stays null (the operation parses it). */
function toOperationInput(input: Record<string, unknown>) {
  const { id, ...rest } = input;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  if (id != null) out.computeId = id;
  return out as NewCompute;
}

builder.queryFields((t) => ({
  computes: t.field({ type: [ComputeRef], resolve: (_r, _a, ctx) => listComputes(ctx) }),
  compute: t.field({
    type: ComputeRef,
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => getCompute(ctx, args.id),
  }),
}));

builder.mutationFields((t) => ({
  createCompute: t.field({
    type: ComputeRef,
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateComputeInput, required: true }) },
    resolve: (_r, args, ctx) => createCompute(ctx, toOperationInput(args.input)),
  }),
  updateCompute: t.field({
    type: ComputeRef,
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: UpdateComputeInput, required: true }) },
    resolve: (_r, args, ctx) => updateCompute(ctx, args.id, toOperationInput(args.input)),
  }),
  deleteCompute: t.field({
    type: "Boolean",
    description: "True when a compute was deleted, false when there was none with this id",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => Boolean(await deleteCompute(ctx, args.id)),
  }),
}));

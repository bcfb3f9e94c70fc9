import type { ArgBuilder } from "@pothos/core";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import type { Capabilities, Compute } from "./model.js";
import { PROTOCOLS } from "./schema.js";
import { createCompute, deleteCompute, getCompute, listComputes, updateCompute } from "./operations.js";
import type { NewCompute } from "./schema.js";
import { forwardToCompute } from "./forwarding.js";
import { computePorts, type PortUsage } from "./ports.js";
import { controllerStatistics, type ComputeStatistics } from "./statistics.js";
import type { HostStatistics } from "./usage.js";

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
  fields: (t) => ({ id: t.id({ required: false, description: "Chosen by the server when absent" }), ...fields(true)(t) }),
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
  computes: t.connection(
    { type: ComputeRef, description: "The computes: this host (local) and the remote ones registered", resolve: async (_r, args, ctx) => arrayPage(args, await listComputes(ctx)) },
    arrayConnectionOptions,
  ),
  compute: t.field({
    type: ComputeRef,
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }) },
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
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateComputeInput, required: true }) },
    resolve: (_r, args, ctx) => updateCompute(ctx, args.id, toOperationInput(args.input)),
  }),
  deleteCompute: t.field({
    type: "Boolean",
    description: "True when a compute was deleted, false when there was none with this id",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) => Boolean(await deleteCompute(ctx, args.id)),
  }),
}));

const HostStatisticsRef = builder.objectRef<HostStatistics>("HostStatistics").implement({
  description: "A host's load (GNS3's compute statistics)",
  fields: (t) => ({
    cpuUsagePercent: t.exposeFloat("cpu_usage_percent"),
    memoryUsagePercent: t.exposeFloat("memory_usage_percent"),
    memoryTotal: t.exposeFloat("memory_total", { description: "Bytes" }),
    memoryFree: t.exposeFloat("memory_free"),
    memoryUsed: t.exposeFloat("memory_used"),
    swapTotal: t.exposeFloat("swap_total"),
    swapFree: t.exposeFloat("swap_free"),
    swapUsed: t.exposeFloat("swap_used"),
    swapUsagePercent: t.exposeFloat("swap_usage_percent"),
    diskUsagePercent: t.exposeFloat("disk_usage_percent"),
    loadAveragePercent: t.exposeIntList("load_average_percent", { description: "1, 5 and 15 minutes, per CPU" }),
  }),
});
const ComputeStatisticsRef = builder.objectRef<ComputeStatistics>("ComputeStatistics").implement({
  fields: (t) => ({
    computeId: t.exposeString("compute_id"),
    computeName: t.exposeString("compute_name"),
    statistics: t.field({ type: HostStatisticsRef, resolve: (s) => s.statistics }),
  }),
});
const PortUsageRef = builder.objectRef<PortUsage>("ComputePortUsage").implement({
  description: "A compute's port ranges and the ports reserved in them",
  fields: (t) => ({
    consolePortRange: t.exposeIntList("console_port_range"),
    consolePorts: t.exposeIntList("console_ports"),
    udpPortRange: t.exposeIntList("udp_port_range"),
    udpPorts: t.exposeIntList("udp_ports"),
  }),
});

const ForwardMethod = builder.enumType("ComputeForwardMethod", { values: ["POST", "PUT"] as const });
/** The compute-API path after /v2/compute/{emulator}/ (segments kept as given; the operation encodes them). */
const forwardArgs = (t: ArgBuilder<Types>) => ({
  computeId: t.id({ required: true }),
  emulator: t.string({ required: true, description: "qemu, docker, vpcs …" }),
  path: t.string({ required: true, description: "What follows /v2/compute/{emulator}/ on the compute" }),
});

builder.queryFields((t) => ({
  computeStatistics: t.field({
    type: [ComputeStatisticsRef],
    description: "This host measured now and each connected remote compute as of its last poll",
    resolve: (_r, _a, ctx) => controllerStatistics(ctx),
  }),
  computePorts: t.field({
    type: PortUsageRef,
    errors: { types: DOMAIN_ERRORS },
    args: { computeId: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => computePorts(ctx, args.computeId),
  }),
  computeResource: t.field({
    type: "JSON",
    nullable: true,
    description: "GET passed through to the compute's /v2/compute/{emulator}/{path}; its errors mapped as GNS3's controller maps them",
    errors: { types: DOMAIN_ERRORS },
    args: forwardArgs(t.arg),
    resolve: (_r, a, ctx) => forwardToCompute(ctx, a.computeId, "GET", a.emulator, a.path),
  }),
}));

builder.mutationField("forwardToCompute", (t) =>
  t.field({
    type: "JSON",
    nullable: true,
    description: "POST or PUT passed through to the compute's /v2/compute/{emulator}/{path} with a JSON body",
    errors: { types: DOMAIN_ERRORS },
    args: { ...forwardArgs(t.arg), method: t.arg({ type: ForwardMethod, required: true }), body: t.arg({ type: "JSON" }) },
    resolve: (_r, a, ctx) => {
      const body = a.body === undefined || a.body === null ? undefined : Buffer.from(JSON.stringify(a.body));
      return forwardToCompute(ctx, a.computeId, a.method, a.emulator, a.path, body, body ? "application/json" : undefined);
    },
  }),
);

import type { Node, Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { builder } from "../../platform/graphql/builder.js";
import { FORWARDED_ERRORS } from "../computes/forwarding.js";
import { domainId } from "../../platform/graphql/global-id.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { ProjectRef } from "../projects/graphql.js";
import { nodeAddress, nodeInput, NodeRef } from "./graphql.js";
import { projectNodesAction, reloadNode, startNode, stopNode, suspendNode } from "./lifecycle.js";

/** GraphQL face of the node lifecycle: the result describes the node as its compute runs it. */
type MutationFieldBuilder = Parameters<Parameters<typeof builder.mutationFields>[0]>[0];

const NodeLifecycleAction = builder.enumType("NodeLifecycleAction", {
  description: "What to do with every node of a project at once",
  values: {
    START: { value: "start", description: "Start every node" },
    STOP: { value: "stop", description: "Stop every node" },
    SUSPEND: { value: "suspend", description: "Suspend every node (those that cannot be suspended keep running)" },
    RELOAD: { value: "reload", description: "Stop every node, then start them all" },
  } as const,
});

const NodePayload = (name: string, description: string) =>
  payloadType<{ node: Node }>(name, description, (t) => ({
    node: t.field({ type: NodeRef, description: "The node as its compute runs it now (status, console, command line)", resolve: (p) => p.node }),
  }));

type Lifecycle = (ctx: AppContext, projectId: string, nodeId: string) => Promise<Node>;
/**
 * startNode, stopNode …: the node's id in, the node as it runs now out (so a cached node's status follows). The
 * action is carried out by the compute that runs the node (a remote one through its API) on the instance that runs
 * the project: every error a forwarded request has is possible.
 */
const lifecycleField = (t: MutationFieldBuilder, name: string, run: Lifecycle, description: string) =>
  t.field({
    type: NodePayload(name, `What \`${name}\` changed: the node`),
    description,
    errors: mutationErrors(name, FORWARDED_ERRORS),
    args: { input: t.arg({ type: nodeInput(name), required: true, description: "The node" }) },
    resolve: async (_r, { input }, ctx) => {
      const { projectId, id } = await nodeAddress(ctx, input.id);
      return { node: await run(ctx, projectId, id) };
    },
  });


builder.mutationFields((t) => ({
  startNode: lifecycleField(t, "startNode", startNode, "Starts the node's emulator; ConflictError names what this host lacks for node types it cannot run"),
  stopNode: lifecycleField(t, "stopNode", stopNode, "Stops the node's emulator (a no-op for always-running hubs and switches)"),
  suspendNode: lifecycleField(t, "suspendNode", suspendNode, "Suspends the node (VPCS cannot be suspended: accepted, nothing changes)"),
  reloadNode: lifecycleField(t, "reloadNode", reloadNode, "Stops then starts the node"),
}));

const ProjectNodesActionInput = builder.inputType("ProjectNodesActionInput", {
  description: "A project and what to do with all its nodes",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id; an opened project)" }),
    action: t.field({ type: NodeLifecycleAction, required: true, description: "What to do with the nodes" }),
  }),
});
const ProjectNodesActionPayload = payloadType<{ project: Project }>("projectNodesAction", "What `projectNodesAction` changed: the project, whose nodes show their new status", (t) => ({
  project: t.field({ type: ProjectRef, description: "The project: select `nodes { … status }` to see where each node stands", resolve: (p) => p.project }),
}));

builder.mutationField("projectNodesAction", (t) =>
  t.field({
    type: ProjectNodesActionPayload,
    description: "Runs the action on every node of the project, many at once (reload = stop all, then start all); a node that fails does not stop the others, and the first failure is the error",
    errors: mutationErrors("projectNodesAction", FORWARDED_ERRORS),
    args: { input: t.arg({ type: ProjectNodesActionInput, required: true, description: "The project and the action" }) },
    resolve: async (_r, { input }, ctx) => {
      const projectId = domainId(input.projectId, "Project", "projectId");
      await projectNodesAction(ctx, projectId, input.action);
      return { project: await ctx.db.project.findUniqueOrThrow({ where: { id: projectId } }) };
    },
  }),
);

import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { projectNodesAction, reloadNode, startNode, stopNode, suspendNode } from "./lifecycle.js";

/** GraphQL face of the node lifecycle: the result describes the node as its compute runs it. */
type MutationFieldBuilder = Parameters<Parameters<typeof builder.mutationFields>[0]>[0];

const NodeRunStatus = builder.enumType("NodeRunStatus", {
  description: "Whether the node's emulator is running",
  values: { STARTED: { value: "started" }, STOPPED: { value: "stopped" }, SUSPENDED: { value: "suspended" } } as const,
});

const NodeLifecycleAction = builder.enumType("NodeLifecycleAction", {
  values: { START: { value: "start" }, STOP: { value: "stop" }, SUSPEND: { value: "suspend" }, RELOAD: { value: "reload" } } as const,
});

const NodeRunState = builder.objectRef<Node>("NodeRunState").implement({
  description: "A node as the compute runs it",
  fields: (t) => ({
    nodeId: t.exposeString("id"),
    projectId: t.exposeString("projectId"),
    name: t.exposeString("name"),
    nodeType: t.exposeString("nodeType"),
    status: t.field({ type: NodeRunStatus, resolve: (n) => n.status as "started" | "stopped" | "suspended" }),
    commandLine: t.exposeString("commandLine", { nullable: true, description: "The emulator's command line once started" }),
    console: t.exposeInt("console", { nullable: true }),
    consoleHost: t.exposeString("consoleHost", { nullable: true }),
    consoleType: t.exposeString("consoleType", { nullable: true }),
  }),
});

type Lifecycle = (ctx: AppContext, projectId: string, nodeId: string) => Promise<Node>;
/** The same arguments as the other node mutations (deleteNode, updateNode). */
const lifecycleField = (t: MutationFieldBuilder, run: Lifecycle, description: string) =>
  t.field({
    type: NodeRunState,
    description,
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => run(ctx, String(a.projectId), String(a.id)),
  });

builder.mutationFields((t) => ({
  startNode: lifecycleField(t, startNode, "Starts the node's emulator; ConflictError names what this host lacks for node types it cannot run"),
  stopNode: lifecycleField(t, stopNode, "Stops the node's emulator (a no-op for always-running hubs and switches)"),
  suspendNode: lifecycleField(t, suspendNode, "Suspends the node (VPCS cannot be suspended: accepted, nothing changes)"),
  reloadNode: lifecycleField(t, reloadNode, "Stops then starts the node"),
}));

builder.mutationField("projectNodesAction", (t) =>
  t.field({
    type: "Boolean",
    description: "Runs the action on every node of the project, many at once (reload = stop all, then start all); a node that fails does not stop the others, and the first failure is the error",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), action: t.arg({ type: NodeLifecycleAction, required: true }) },
    resolve: async (_r, a, ctx) => {
      await projectNodesAction(ctx, String(a.projectId), a.action);
      return true;
    },
  }),
);

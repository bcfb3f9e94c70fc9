import type { Client } from "graphql-ws";
import { describe, expect, it } from "vitest";
import { notificationSocket } from "../support/gns3-ws.js";
import { busSubscribed, call, serverWithGraphqlClient, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { globalId } from "../../src/platform/graphql/global-id.js";

/**
 * Issue 10 item 4: operations publish domain events; GraphQL exposes them as typed events (the changed object
 * with its GraphQL fields, the changed field names), and the GNS3 streams still get GNS3's wire form.
 */
const PROJECT_EVENTS = `subscription($p: ID!) { projectEvents(projectId: $p) { ... on SubscriptionProjectEventsSuccess { data {
  __typename cursor action
  ... on NodeEvent { kind changed node { id nodeId name status x nodeDirectory ports { shortName } } }
  ... on LinkEvent { kind link { id linkId suspend filters { packetLossPercent } } }
  ... on DrawingEvent { kind changed drawing { id drawingId x } }
} } } }`;
const CONTROLLER_EVENTS = `subscription { controllerEvents { ... on SubscriptionControllerEventsSuccess { data {
  __typename action
  ... on ProjectEvent { kind changed project { projectId name status } }
  ... on ComputeEvent { kind compute { id computeId } }
  ... on TemplateEvent { kind template { id templateId name } }
  ... on SettingsEvent { settings }
} } } }`;

function collect(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const items: any[] = [];
  const stop = client.subscribe({ query, variables }, { next: (v) => items.push(v.data ?? v.errors), error: (e) => items.push(e), complete: () => {} });
  return { items, stop };
}

describe("GraphQL typed events", () => {
  let s: TestServer;
  let client: Client;
  serverWithGraphqlClient((server, ws) => ((s = server), (client = ws)));

  it("project channel: NodeEvent, LinkEvent and DrawingEvent carry typed objects and changed fields; GNS3 streams keep the wire form", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: "typed", auto_close: false })).body;
    const P = `/v2/projects/${p.project_id}`;
    const idle = s.ctx.bus.subscriberCount();
    const before = idle;
    const sub = collect(client, PROJECT_EVENTS, { p: p.project_id });
    await busSubscribed(s, before);
    const ws = await notificationSocket(`${s.url.replace(/^http/, "ws")}${P}/notifications/ws`);

    const pc = (await call(s.url, "POST", `${P}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body;
    const sw = (await call(s.url, "POST", `${P}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local" })).body;
    await call(s.url, "PUT", `${P}/nodes/${pc.node_id}`, { x: 40 });
    const link = (await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: pc.node_id, adapter_number: 0, port_number: 0 }, { node_id: sw.node_id, adapter_number: 0, port_number: 0 }] })).body;
    await call(s.url, "PUT", `${P}/links/${link.link_id}`, { suspend: true });
    const drawing = (await call(s.url, "POST", `${P}/drawings`, { svg: "<svg><rect/></svg>", x: 1 })).body;
    await call(s.url, "PUT", `${P}/drawings/${drawing.drawing_id}`, { x: 9 });
    await call(s.url, "DELETE", `${P}/nodes/${pc.node_id}`);

    await waitFor(() => sub.items.some((i) => i.projectEvents?.data?.action === "node.deleted"), 5000, "node.deleted on projectEvents");
    sub.stop();
    const events = sub.items.map((i) => i.projectEvents.data);
    const byAction = (action: string) => events.filter((e) => e.action === action);

    expect(byAction("node.created")[0]).toMatchObject({
      __typename: "NodeEvent",
      kind: "CREATED",
      changed: null,
      node: { id: globalId("EmulatedNode", pc.node_id), nodeId: pc.node_id, name: "PC1", status: "STOPPED", nodeDirectory: pc.node_directory, ports: [{ shortName: "e0" }] },
    });
    expect(byAction("node.updated").find((e) => e.node.nodeId === pc.node_id)).toMatchObject({ kind: "UPDATED", changed: ["x"], node: { x: 40 } });
    expect(byAction("link.updated").at(-1)).toMatchObject({ __typename: "LinkEvent", kind: "UPDATED", link: { id: globalId("Link", link.link_id), linkId: link.link_id, suspend: true } });
    expect(byAction("drawing.updated")[0]).toMatchObject({ __typename: "DrawingEvent", changed: ["x"], drawing: { id: globalId("Drawing", drawing.drawing_id), drawingId: drawing.drawing_id, x: 9 } });
    // A deleted node is the node as it was, from the event: its directory too (the event carries the project's).
    expect(byAction("node.deleted")[0]).toMatchObject({ kind: "DELETED", node: { nodeId: pc.node_id, x: 40, nodeDirectory: pc.node_directory } });
    expect(sub.items.filter((i) => !i.projectEvents?.data)).toEqual([]); // no event nulled by a read of what is gone
    expect(events.every((e) => /^\d+-\d+$/.test(e.cursor))).toBe(true);

    // The same changes on the GNS3 stream, in GNS3's form (drawing.updated without the unchanged svg).
    const moved = await ws.next("node.updated", (e) => e.node_id === pc.node_id && e.x === 40);
    expect(moved.event).toMatchObject({ node_id: pc.node_id, name: "PC1", node_type: "vpcs", project_id: p.project_id, node_directory: pc.node_directory });
    const redrawn = await ws.next("drawing.updated");
    expect(redrawn.event).toEqual({ drawing_id: drawing.drawing_id, project_id: p.project_id, x: 9, y: 0, z: 2, locked: false, rotation: 0 });
    ws.close();
    await waitFor(() => s.ctx.bus.subscriberCount() === idle, 5000, "both subscribers released");
  });

  it("controller channel: ProjectEvent with changed fields, TemplateEvent, SettingsEvent", async () => {
    const before = s.ctx.bus.subscriberCount();
    const sub = collect(client, CONTROLLER_EVENTS);
    await busSubscribed(s, before);
    const p = (await call(s.url, "POST", "/v2/projects", { name: "ctl-typed" })).body;
    await call(s.url, "PUT", `/v2/projects/${p.project_id}`, { name: "ctl-renamed", zoom: 80 });
    await call(s.url, "POST", `/v2/projects/${p.project_id}/close`);
    const t = (await call(s.url, "POST", "/v2/templates", { name: "Hub T", template_type: "ethernet_hub", compute_id: "local" })).body;
    expect((await call(s.url, "POST", "/v2/settings", { theme: "dark" })).status).toBe(201);
    await waitFor(() => sub.items.some((i) => i.controllerEvents?.data?.action === "settings.updated"), 5000, "settings.updated").catch((e) => {
      throw new Error(`${e.message}: ${JSON.stringify(sub.items)}`);
    });
    sub.stop();
    const events = sub.items.map((i) => i.controllerEvents.data);
    expect(events.map((e) => [e.__typename, e.action])).toEqual([
      ["ProjectEvent", "project.created"],
      ["ProjectEvent", "project.updated"],
      ["ProjectEvent", "project.closed"],
      ["TemplateEvent", "template.created"],
      ["SettingsEvent", "settings.updated"],
    ]);
    expect(events[1]).toMatchObject({ kind: "UPDATED", changed: ["name", "zoomPercent"], project: { projectId: p.project_id, name: "ctl-renamed" } });
    expect(events[2]).toMatchObject({ kind: "CLOSED", project: { status: "CLOSED" } });
    expect(events[3]).toMatchObject({ kind: "CREATED", template: { id: globalId("Template", t.template_id), templateId: t.template_id, name: "Hub T" } });
    expect(events[4].settings).toMatchObject({ theme: "dark", modification_uuid: expect.any(String) });
  });
  it("narrows a project's events to one node (its own and its links') or to one link", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: "narrowed", auto_close: false })).body;
    const P = `/v2/projects/${p.project_id}`;
    const node = async (name: string, node_type: string) => (await call(s.url, "POST", `${P}/nodes`, { name, node_type, compute_id: "local" })).body.node_id as string;
    const [pc1, pc2, sw] = [await node("PC1", "vpcs"), await node("PC2", "vpcs"), await node("SW1", "ethernet_switch")];
    const NARROWED = `subscription($p: ID!, $n: ID, $l: ID) { projectEvents(projectId: $p, nodeId: $n, linkId: $l) {
      ... on SubscriptionProjectEventsSuccess { data { action ... on NodeEvent { node { nodeId } } ... on LinkEvent { link { linkId } } } } } }`;
    const follow = async (variables: Record<string, unknown>) => {
      const before = s.ctx.bus.subscriberCount();
      const sub = collect(client, NARROWED, { p: p.project_id, ...variables });
      await busSubscribed(s, before);
      return sub;
    };
    const bySwitch = await follow({ n: globalId("EmulatedNode", sw) }); // a node's global id or its GNS3 id
    const byPc2 = await follow({ n: pc2 });
    const pending = await follow({ l: "00000000-0000-4000-8000-000000000001" });

    await call(s.url, "PUT", `${P}/nodes/${pc1}`, { x: 10 });
    await call(s.url, "PUT", `${P}/nodes/${sw}`, { x: 20 });
    const link = async (a: string) =>
      (await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: a, adapter_number: 0, port_number: 0 }, { node_id: sw, adapter_number: 0, port_number: a === pc1 ? 0 : 1 }] })).body.link_id as string;
    const l1 = await link(pc1);
    const byL1 = await follow({ l: l1 });
    await call(s.url, "PUT", `${P}/links/${l1}`, { suspend: true });
    const l2 = await link(pc2);

    const seen = (sub: ReturnType<typeof collect>) => sub.items.map((i) => i.projectEvents.data).map((d) => `${d.action} ${d.node?.nodeId ?? d.link?.linkId}`);
    await waitFor(() => seen(bySwitch).includes(`link.created ${l2}`) && seen(byPc2).includes(`link.created ${l2}`), 5000, "the second link at both");
    await waitFor(() => seen(byL1).includes(`link.updated ${l1}`), 5000, "the suspend at the link's subscriber");
    expect(seen(bySwitch)).toEqual([`node.updated ${sw}`, `link.created ${l1}`, `link.updated ${l1}`, `link.created ${l2}`]);
    expect(seen(byPc2)).toEqual([`link.created ${l2}`]);
    expect(seen(byL1)).toEqual([`link.updated ${l1}`]);
    expect(seen(pending)).toEqual([]);
    for (const sub of [bySwitch, byPc2, byL1, pending]) sub.stop();
  });
});

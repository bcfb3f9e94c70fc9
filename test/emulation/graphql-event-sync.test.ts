import type { Client } from "graphql-ws";
import { describe, expect, it } from "vitest";
import { busSubscribed, call, gql, nodesOf, serverWithGraphqlClient, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { globalId } from "../../src/platform/graphql/global-id.js";

/**
 * Issue 22 point 5: a client keeps a local model of a project from `projectEvents` alone — through creates,
 * updates, deletes (explicit and cascaded from a node delete), a snapshot restore and a reconnect with `after` —
 * and the model equals a fresh query: no ghost nodes or links. Deleted objects arrive as they were (a link with its
 * endpoints and their nodes), a restore announces what it took away, and a cursor the server no longer holds gets
 * a typed ResyncEvent instead of silently skipping events.
 */
const NODE = "id nodeId name x";
const LINK = `id linkId suspend endpoints { adapterNumber portNumber node { id name } }`;
const DRAWING = "id x";
const READ = `query($p: ID!) { project(id: $p) { eventCursor nodes(first: 100) { edges { node { ${NODE} } } }
  links(first: 100) { edges { node { ${LINK} } } } drawings(first: 100) { edges { node { ${DRAWING} } } } } }`;
const EVENTS = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) {
  __typename ... on SubscriptionProjectEventsSuccess { data { __typename cursor action
    ... on NodeEvent { kind node { ${NODE} } }
    ... on LinkEvent { kind link { ${LINK} } }
    ... on DrawingEvent { kind drawing { ${DRAWING} } }
    ... on ResyncEvent { reason } } }
  ... on Error { message } } }`;

type Obj = { id: string } & Record<string, unknown>;
interface Model {
  nodes: Map<string, Obj>;
  links: Map<string, Obj>;
  drawings: Map<string, Obj>;
}

const byId = (list: Obj[]) => new Map(list.map((o) => [o.id, o]));
const sorted = (m: Map<string, Obj>) => [...m.values()].sort((a, b) => a.id.localeCompare(b.id));

async function read(s: TestServer, projectId: string): Promise<{ model: Model; cursor: string }> {
  const r = await gql(s.url, READ, { p: projectId });
  expect(r.errors).toBeUndefined();
  const p = r.data.project;
  return { model: { nodes: byId(nodesOf(p.nodes)), links: byId(nodesOf(p.links)), drawings: byId(nodesOf(p.drawings)) }, cursor: p.eventCursor };
}

/** A follower of the stream that applies every event to its model (and re-reads on a ResyncEvent). */
function follow(s: TestServer, client: Client, projectId: string, model: Model, after: string | undefined) {
  const seen: any[] = [];
  let last = after;
  const stop = client.subscribe(
    { query: EVENTS, variables: { p: projectId, after } },
    {
      next: async (v) => {
        const result = (v.data as { projectEvents?: any } | null | undefined)?.projectEvents;
        if (!result || result.__typename !== "SubscriptionProjectEventsSuccess" || v.errors) {
          seen.push({ broken: v });
          return;
        }
        const e = result.data;
        seen.push(e);
        last = e.cursor;
        const apply = (m: Map<string, Obj>, o: Obj) => (e.kind === "DELETED" ? m.delete(o.id) : m.set(o.id, o));
        if (e.__typename === "NodeEvent") apply(model.nodes, e.node);
        else if (e.__typename === "LinkEvent") apply(model.links, e.link);
        else if (e.__typename === "DrawingEvent") apply(model.drawings, e.drawing);
        else if (e.__typename === "ResyncEvent") {
          const fresh = (await read(s, projectId)).model;
          Object.assign(model, fresh);
        }
      },
      error: (err) => seen.push({ broken: err }),
      complete: () => {},
    },
  );
  return { seen, stop, last: () => last };
}

describe("a local model kept from projectEvents", () => {
  let s: TestServer;
  let client: Client;
  serverWithGraphqlClient((server, ws) => ((s = server), (client = ws)));

  it("matches a fresh query after creates, updates, deletes (explicit and cascaded), a snapshot restore and a reconnect", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: "synced", auto_close: false })).body;
    const P = `/v2/projects/${p.project_id}`;
    const node = async (name: string, node_type = "vpcs") => (await call(s.url, "POST", `${P}/nodes`, { name, node_type, compute_id: "local" })).body.node_id as string;
    const link = async (a: string, b: string, bp: number) =>
      (await call(s.url, "POST", `${P}/links`, { nodes: [{ node_id: a, adapter_number: 0, port_number: 0 }, { node_id: b, adapter_number: 0, port_number: bp }] })).body.link_id as string;

    // Something before the read: the model starts from the query, the stream from its cursor.
    const sw = await node("SW1", "ethernet_switch");
    const first = await read(s, p.project_id);
    expect(first.model.nodes.size).toBe(1);
    const model = first.model;
    const before = s.ctx.bus.subscriberCount();
    let f = follow(s, client, p.project_id, model, first.cursor);
    await busSubscribed(s, before);

    const pc1 = await node("PC1");
    const pc2 = await node("PC2");
    const pc3 = await node("PC3");
    const l1 = await link(pc1, sw, 1);
    const l2 = await link(pc2, sw, 2);
    const l3 = await link(pc3, sw, 3);
    await call(s.url, "PUT", `${P}/nodes/${pc1}`, { x: 40 });
    await call(s.url, "PUT", `${P}/links/${l1}`, { suspend: true });
    const d = (await call(s.url, "POST", `${P}/drawings`, { svg: "<svg><rect/></svg>", x: 1 })).body.drawing_id as string;
    expect((await call(s.url, "DELETE", `${P}/links/${l2}`)).status).toBe(204); // explicit
    expect((await call(s.url, "DELETE", `${P}/nodes/${pc3}`)).status).toBe(204); // cascades to l3
    const snap = (await call(s.url, "POST", `${P}/snapshots`, { name: "base" })).body;
    expect(snap.snapshot_id).toBeTruthy();

    // After the snapshot: a node, a link and a drawing the restore takes away, and a move it undoes.
    const pc4 = await node("PC4");
    const l4 = await link(pc4, sw, 4);
    await call(s.url, "POST", `${P}/drawings`, { svg: "<svg><ellipse/></svg>", x: 5 });
    await call(s.url, "PUT", `${P}/nodes/${pc1}`, { x: 80 });
    const restored = await call(s.url, "POST", `${P}/snapshots/${snap.snapshot_id}/restore`);
    expect(restored.status).toBe(201);
    await waitFor(() => f.seen.some((e) => e.action === "snapshot.restored"), 10_000, "snapshot.restored");

    // The deletes arrived as the objects were: a link's endpoints with their nodes, also when its node went with it.
    const deleted = f.seen.filter((e) => e.action === "link.deleted");
    expect(deleted.map((e) => e.link.linkId).sort()).toEqual([l2, l3, l4].sort());
    for (const e of deleted) expect(e.link.endpoints.map((x: any) => x.node.name).sort()).toEqual(expect.arrayContaining(["SW1"]));
    expect(deleted.find((e) => e.link.linkId === l3).link.endpoints.map((x: any) => x.node.name).sort()).toEqual(["PC3", "SW1"]);
    expect(f.seen.filter((e) => e.action === "node.deleted").map((e) => e.node.nodeId).sort()).toEqual([pc3, pc4].sort());
    expect(f.seen.filter((e) => e.action === "drawing.deleted")).toHaveLength(1);
    expect(f.seen.filter((e) => e.broken)).toEqual([]);

    // A reconnect: changes while away arrive from the last cursor seen.
    const lastSeen = f.last();
    f.stop();
    await waitFor(() => s.ctx.bus.subscriberCount() === before, 5000, "the subscriber released");
    const pc5 = await node("PC5");
    await link(pc5, sw, 5);
    await call(s.url, "PUT", `${P}/links/${l1}`, { suspend: false });
    expect((await call(s.url, "DELETE", `${P}/nodes/${pc2}`)).status).toBe(204);
    f = follow(s, client, p.project_id, model, lastSeen);
    await busSubscribed(s, before);
    await call(s.url, "PUT", `${P}/drawings/${d}`, { x: 999 }); // the last change: once it is in, everything is
    await waitFor(() => model.drawings.get(globalId("Drawing", d))?.x === 999, 10_000, "the last change in the model");
    f.stop();
    expect(f.seen.filter((e) => e.broken || e.__typename === "ResyncEvent")).toEqual([]);

    const fresh = (await read(s, p.project_id)).model;
    expect(sorted(model.nodes)).toEqual(sorted(fresh.nodes));
    expect(sorted(model.links)).toEqual(sorted(fresh.links));
    expect(sorted(model.drawings)).toEqual(sorted(fresh.drawings));
    expect([...fresh.nodes.values()].map((n) => n.name).sort()).toEqual(["PC1", "PC5", "SW1"]);
    expect(fresh.nodes.get(globalId("EmulatedNode", pc1))).toMatchObject({ x: 40 }); // the restore undid the move to 80
    expect(fresh.links.has(globalId("Link", l1)) && !fresh.links.has(globalId("Link", l4))).toBe(true);
  });

  it("a cursor older than the window, or unknown, gets a ResyncEvent, then the live stream", async () => {
    const p = (await call(s.url, "POST", "/v2/projects", { name: "resync", auto_close: false })).body;
    const { cursor } = await read(s, p.project_id);
    // Push the cursor out of the bus window (10,000 events) with events on a channel nobody follows.
    for (let i = 0; i < 10_001; i++) await s.ctx.bus.publish("test:filler" as never, { i } as never);
    const idle = s.ctx.bus.subscriberCount();
    for (const [after, reason] of [[cursor, "EXPIRED"], ["0-999999999", "UNKNOWN"]] as const) {
      const model: Model = { nodes: new Map(), links: new Map(), drawings: new Map() };
      const before = s.ctx.bus.subscriberCount();
      const f = follow(s, client, p.project_id, model, after);
      await busSubscribed(s, before);
      await waitFor(() => f.seen.length > 0, 5000, "the first event");
      const name = `PC-${reason}`;
      const id = (await call(s.url, "POST", `/v2/projects/${p.project_id}/nodes`, { name, node_type: "vpcs", compute_id: "local" })).body.node_id;
      await waitFor(() => model.nodes.has(globalId("EmulatedNode", id)), 5000, "the live node.created");
      f.stop();
      await waitFor(() => s.ctx.bus.subscriberCount() === idle, 5000, "the subscriber released");
      expect(f.seen[0]).toMatchObject({ __typename: "ResyncEvent", action: "stream.resync", reason });
      expect(f.seen.slice(1).map((e) => e.action)).toEqual(["node.created"]);
      expect(BigInt(f.seen[1].cursor.split("-")[1])).toBeGreaterThan(BigInt(f.seen[0].cursor.split("-")[1]));
    }
    // A cursor still in the window replays without a resync.
    const { cursor: recent } = await read(s, p.project_id);
    await call(s.url, "POST", `/v2/projects/${p.project_id}/nodes`, { name: "PC-late", node_type: "vpcs", compute_id: "local" });
    const model: Model = { nodes: new Map(), links: new Map(), drawings: new Map() };
    const f = follow(s, client, p.project_id, model, recent);
    await waitFor(() => f.seen.length > 0, 5000, "the replay");
    f.stop();
    expect(f.seen.map((e) => [e.__typename, e.node?.name])).toEqual([["NodeEvent", "PC-late"]]);
  });
});

import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createClient } from "graphql-ws";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { unzip, zip } from "./archive-support.js";
import { GUI_SVG } from "./drawings-support.js";
import { ndjsonStream } from "./nodes-support.js";

const guiDrawing = (svg: string, extra: object = {}) => ({ drawing_id: randomUUID(), x: -50, y: 30, z: 1, locked: false, rotation: 0, svg, ...extra });

declare module "../../src/platform/events.js" {
  interface EventChannels {
    /** A channel no one follows: publishing on it only takes a cursor. */
    "test:mark": object;
  }
}

describe("GNS3 drawings", () => {
  let s: TestServer;
  let pid: string;
  let P: string;

  let projects = 0;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());
  // Each test draws in a project of its own: the drawings it lists are only its own.
  beforeEach(async () => {
    const r = await call(s.url, "POST", "/v2/projects", { name: `drawings-${++projects}` });
    expect(r.status).toBe(201);
    pid = r.body.project_id;
    P = `/v2/projects/${pid}`;
  });

  it("keeps the GUI's drawing ids and echoes every tool's SVG byte for byte, with GNS3's statuses and headers", async () => {
    for (const svg of Object.values(GUI_SVG)) {
      const body = guiDrawing(svg);
      const r = await call(s.url, "POST", `${P}/drawings`, body);
      expect(r.status).toBe(201);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.body).toEqual({ ...body, project_id: pid });
      const got = await call(s.url, "GET", `${P}/drawings/${body.drawing_id}`);
      expect(got).toMatchObject({ status: 200, body: r.body });
    }
    const list = await call(s.url, "GET", `${P}/drawings`);
    expect(list.status).toBe(200);
    expect(list.body.map((d: any) => d.svg)).toEqual(Object.values(GUI_SVG));
  });

  it("fills GNS3's defaults, re-posting a known id returns it unchanged, drawing_id null gets a new id", async () => {
    const r = await call(s.url, "POST", `${P}/drawings`, {});
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ drawing_id: expect.any(String), project_id: pid, x: 0, y: 0, z: 2, locked: false, rotation: 0, svg: "<svg></svg>" });
    const again = await call(s.url, "POST", `${P}/drawings`, { drawing_id: r.body.drawing_id, x: 99, svg: GUI_SVG.line });
    expect(again).toMatchObject({ status: 201, body: r.body });
    // The GUI re-posts with drawing_id null after a "doesn't exist" error; GNS3 answers 400, Patchbay creates it.
    const fresh = await call(s.url, "POST", `${P}/drawings`, { drawing_id: null, x: 5, svg: GUI_SVG.note });
    expect(fresh.status).toBe(201);
    expect(fresh.body.drawing_id).not.toBe(r.body.drawing_id);
    expect((await call(s.url, "DELETE", `${P}/drawings/${r.body.drawing_id}`)).status).toBe(204);
    expect((await call(s.url, "DELETE", `${P}/drawings/${fresh.body.drawing_id}`)).status).toBe(204);
  });

  it("announces create, update (svg only when changed) and delete on the project stream", async () => {
    const stream = ndjsonStream(`${s.url}${P}/notifications`);
    await stream.ready;
    await stream.take(1); // ping
    const body = guiDrawing(GUI_SVG.rectangle);
    const created = (await call(s.url, "POST", `${P}/drawings`, body)).body;
    const moved = await call(s.url, "PUT", `${P}/drawings/${body.drawing_id}`, { drawing_id: body.drawing_id, x: 40, y: 60, z: 1, locked: false, rotation: 0 });
    expect(moved).toMatchObject({ status: 201, body: { ...created, x: 40, y: 60 } });
    const redrawn = await call(s.url, "PUT", `${P}/drawings/${body.drawing_id}`, { svg: GUI_SVG.ellipse, rotation: -90 });
    expect(redrawn.body).toMatchObject({ svg: GUI_SVG.ellipse, rotation: -90 });
    expect((await call(s.url, "DELETE", `${P}/drawings/${body.drawing_id}`)).status).toBe(204);
    const events = (await stream.take(5)).slice(1).map((l) => JSON.parse(l));
    stream.close();
    const { svg: _svg, ...movedWithoutSvg } = moved.body;
    expect(events).toEqual([
      { action: "drawing.created", event: created },
      { action: "drawing.updated", event: movedWithoutSvg },
      { action: "drawing.updated", event: redrawn.body },
      { action: "drawing.deleted", event: redrawn.body },
    ]);
  });

  it("answers GNS3's errors: unknown 404, locked 409, schema 400, closed project 403", async () => {
    const unknown = randomUUID();
    expect(await call(s.url, "GET", `${P}/drawings/${unknown}`)).toMatchObject({ status: 404, body: { message: `Drawing ID ${unknown} doesn't exist`, status: 404 } });
    expect((await call(s.url, "PUT", `${P}/drawings/${unknown}`, { x: 1 })).body.message).toBe(`Drawing ID ${unknown} doesn't exist`);
    const locked = guiDrawing(GUI_SVG.note, { locked: true });
    await call(s.url, "POST", `${P}/drawings`, locked);
    const del = await call(s.url, "DELETE", `${P}/drawings/${locked.drawing_id}`);
    expect(del).toMatchObject({ status: 409, body: { message: `Drawing ID ${locked.drawing_id} cannot be deleted because it is locked`, status: 409 } });
    expect(del.headers.get("content-type")).toBe("application/json");
    expect((await call(s.url, "PUT", `${P}/drawings/${locked.drawing_id}`, { locked: false })).status).toBe(201);
    expect((await call(s.url, "DELETE", `${P}/drawings/${locked.drawing_id}`)).status).toBe(204);

    const rot = await call(s.url, "POST", `${P}/drawings`, { rotation: 400 });
    expect(rot.status).toBe(400);
    expect(rot.body.message).toMatch(/400 is greater than the maximum of 360$/);
    expect((await call(s.url, "POST", `${P}/drawings`, { width: 3 })).body.message).toMatch(/Additional properties are not allowed \('width' was unexpected\)$/);
    expect((await call(s.url, "POST", `${P}/drawings`, { drawing_id: "nope" })).status).toBe(400);

    const other = (await call(s.url, "POST", "/v2/projects", { name: "drawings-closed" })).body.project_id;
    const kept = guiDrawing(GUI_SVG.line);
    await call(s.url, "POST", `/v2/projects/${other}/drawings`, kept);
    await call(s.url, "POST", `/v2/projects/${other}/close`);
    expect(await call(s.url, "POST", `/v2/projects/${other}/drawings`, {})).toMatchObject({ status: 403, body: { message: "The project is not opened" } });
    expect((await call(s.url, "GET", `/v2/projects/${other}/drawings/${kept.drawing_id}`)).status).toBe(403);
    // A closed project lists its topology entries (no project_id), as for nodes and links.
    expect((await call(s.url, "GET", `/v2/projects/${other}/drawings`)).body).toEqual([kept]);
    // The same id in another project is taken.
    expect((await call(s.url, "POST", `${P}/drawings`, { drawing_id: kept.drawing_id })).status).toBe(409);
  });

  const rejected: [string, string, RegExp][] = [
    ["script element", `<svg><script>alert(1)</script></svg>`, /<script> elements are not allowed/],
    ["namespaced script", `<svg xmlns:x="http://www.w3.org/2000/svg"><x:script>alert(1)</x:script></svg>`, /<x:script> elements are not allowed/],
    ["event handler", `<svg onload="alert(1)"></svg>`, /event handler attribute onload/],
    ["event handler, other case", `<svg><rect ONclick='x()' /></svg>`, /event handler attribute ONclick/],
    ["external image", `<svg><image xlink:href="http://evil.example/x.png" /></svg>`, /external reference xlink:href/],
    ["javascript link", `<svg><a href=" jav&#x61;script:alert(1)"><text>x</text></a></svg>`, /script URL|external reference/],
    ["external use", `<svg><use href="other.svg#a" /></svg>`, /external reference href/],
    ["external css url", `<svg><rect style="fill: url(https://evil.example/f)" /></svg>`, /external reference url\(https/],
    ["css import", `<svg><style>@import "https://evil.example/x.css";</style></svg>`, /@import is not allowed in <style>/],
    ["css escapes", `<svg><rect style="fill: \\75rl(x)" /></svg>`, /CSS escapes/],
    ["foreignObject", `<svg><foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject></svg>`, /<foreignObject> elements/],
    ["href animation", `<svg><a><set attributeName="href" to="x" /></a></svg>`, /animating href/],
    ["stylesheet instruction", `<?xml-stylesheet href="https://evil.example/x.css"?><svg></svg>`, /processing instructions/],
    ["entity declarations", `<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg><text>&a;</text></svg>`, /internal subset/],
    ["unknown entity", `<svg><text>&nbsp;</text></svg>`, /unknown entity &nbsp;/],
    ["unbalanced tags", `<svg><rect></svg>`, /<\/svg> does not close <rect>/],
    ["unclosed root", `<svg><rect/>`, /<svg> is not closed/],
    ["not svg", `<html></html>`, /one <svg> element/],
    ["two roots", `<svg></svg><svg></svg>`, /one <svg> element/],
    ["unquoted attribute", `<svg width=10></svg>`, /malformed attributes/],
    ["empty", ``, /one <svg> element/],
    ["too long", `<svg>${"<!-- padding -->".repeat(40_000)}</svg>`, /longer than 524288 characters/],
  ];
  it.each(rejected)("refuses an SVG with %s (400, the server keeps serving)", async (_what, svg, reason) => {
    const r = await call(s.url, "POST", `${P}/drawings`, { svg });
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.body.message).toMatch(/^Invalid SVG: /);
    expect(r.body.message).toMatch(reason);
  });

  it("accepts what drawing tools save: XML declaration, comments, DOCTYPE, namespaces, CDATA styles, fragment references", async () => {
    const inkscape = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created with Inkscape -->
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">
  <defs><linearGradient id="g"><stop offset="0" style="stop-color:#fff"/></linearGradient></defs>
  <style><![CDATA[ .a { fill: url(#g); } ]]></style>
  <rect class="a" width="10" height="10" fill="url(#g)"/><use xlink:href="#g"/>
  <text>R&amp;D &lt;lab&gt; &#233;</text>
</svg>`;
    const r = await call(s.url, "POST", `${P}/drawings`, { svg: inkscape });
    expect(r.status).toBe(201);
    expect(r.body.svg).toBe(inkscape);
  });

  it("GraphQL: Drawing type with its shape, Project.drawings, mutations with typed errors, events on projectEvents", async () => {
    const client = createClient({ url: `${s.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket });
    const events: any[] = [];
    // Subscribing from a cursor taken now replays whatever happens before the subscription is live.
    const mark = await s.ctx.bus.publish("test:mark", {});
    const stop = client.subscribe(
      {
        query: `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { ... on SubscriptionProjectEventsSuccess { data { action payload } } } }`,
        variables: { p: pid, after: mark.id },
      },
      { next: (m: any) => events.push(m.data.projectEvents.data), error: () => {}, complete: () => {} },
    );

    const id = randomUUID();
    const created = await gql(
      s.url,
      `mutation($i: CreateDrawingInput!) { createDrawing(input: $i) { __typename ... on CreateDrawingPayload { drawing { id drawingId project { projectId } x y z locked rotationDegrees svg shape } } } }`,
      { i: { projectId: pid, id, x: 10, y: 20, svg: GUI_SVG.note } },
    );
    const gid = globalId("Drawing", id);
    expect(created.data.createDrawing.drawing).toEqual({ id: gid, drawingId: id, project: { projectId: pid }, x: 10, y: 20, z: 2, locked: false, rotationDegrees: 0, svg: GUI_SVG.note, shape: "NOTE" });
    // REST answers a re-sent drawing_id with that drawing; GraphQL refuses a taken id, as every create does.
    const again = await gql(s.url, `mutation($i: CreateDrawingInput!) { createDrawing(input: $i) { __typename ... on Error { code target } } }`, { i: { projectId: pid, id } });
    expect(again.data.createDrawing).toEqual({ __typename: "ConflictError", code: "ALREADY_EXISTS", target: "id" });
    const bad = await gql(
      s.url,
      `mutation($i: CreateDrawingInput!) { createDrawing(input: $i) { __typename ... on InvalidInputError { message } } }`,
      { i: { projectId: pid, svg: `<svg onload="x()"/>` } },
    );
    expect(bad.data.createDrawing).toEqual({ __typename: "InvalidInputError", message: "Invalid SVG: event handler attribute onload is not allowed" });
    // Named by its global id alone (or its GNS3 id): the drawing finds its project.
    const rotated = await gql(
      s.url,
      `mutation($i: UpdateDrawingInput!) { updateDrawing(input: $i) { ... on UpdateDrawingPayload { drawing { id rotationDegrees shape } } } }`,
      { i: { id: gid, rotationDegrees: 45, svg: GUI_SVG.rectangle } },
    );
    expect(rotated.data.updateDrawing.drawing).toEqual({ id: gid, rotationDegrees: 45, shape: "RECTANGLE" });
    const found = await gql(s.url, `query($id: ID!) { node(id: $id) { __typename ... on Drawing { drawingId } } }`, { id: gid });
    expect(found.data.node).toEqual({ __typename: "Drawing", drawingId: id });
    await call(s.url, "POST", `${P}/drawings`, guiDrawing(GUI_SVG.image));
    const shapes = await gql(s.url, `query($p: ID!) { project(id: $p) { drawings { edges { node { shape } } } } }`, { p: pid });
    expect(shapes.errors).toBeUndefined();
    expect(nodesOf(shapes.data.project.drawings).map((d: any) => d.shape)).toEqual(expect.arrayContaining(["RECTANGLE", "IMAGE"]));
    const DELETE = `mutation($id: ID!) { deleteDrawing(input: { id: $id }) { __typename ... on DeleteDrawingPayload { deletedIds } ... on Error { code message } } }`;
    const deleted = await gql(s.url, DELETE, { id });
    expect(deleted.data.deleteDrawing).toEqual({ __typename: "DeleteDrawingPayload", deletedIds: [gid] });
    // Deleting what is not there is NOT_FOUND, never a silent success.
    expect((await gql(s.url, DELETE, { id })).data.deleteDrawing).toEqual({ __typename: "NotFoundError", code: "NOT_FOUND", message: `Drawing ID ${id} doesn't exist` });
    // A lookup answers null for what nothing has: a deleted drawing, and an id of another type (never looked up as a drawing's).
    for (const lookup of [gid, globalId("Snapshot", id)]) {
      const r = await gql(s.url, `query($id: ID!) { drawing(id: $id) { __typename } }`, { id: lookup });
      expect([r.errors, r.data.drawing]).toEqual([undefined, null]);
    }

    for (let i = 0; i < 100 && events.length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    stop();
    await client.dispose();
    expect(events.filter((e) => e.payload.drawing_id === id).map((e) => [e.action, e.payload.drawing_id, e.payload.svg !== undefined])).toEqual([
      ["drawing.created", id, true],
      ["drawing.updated", id, true],
      ["drawing.deleted", id, true],
    ]);
  });

  it("keeps drawings in the .gns3 file, exports, imports, duplicates and snapshots them", async () => {
    const q = (await call(s.url, "POST", "/v2/projects", { name: "drawings-topology" })).body;
    const Q = `/v2/projects/${q.project_id}`;
    const note = guiDrawing(GUI_SVG.note, { locked: true });
    const image = guiDrawing(GUI_SVG.image, { rotation: 30 });
    await call(s.url, "POST", `${Q}/drawings`, note);
    await call(s.url, "POST", `${Q}/drawings`, image);

    const snap = (await call(s.url, "POST", `${Q}/snapshots`, { name: "with-drawings" })).body;
    await call(s.url, "PUT", `${Q}/drawings/${note.drawing_id}`, { locked: false });
    await call(s.url, "DELETE", `${Q}/drawings/${note.drawing_id}`);
    expect((await call(s.url, "POST", `${Q}/snapshots/${snap.snapshot_id}/restore`)).status).toBe(201);
    expect((await call(s.url, "GET", `${Q}/drawings`)).body).toEqual([note, image].map((d) => ({ ...d, project_id: q.project_id })));

    await call(s.url, "POST", `${Q}/close`);
    const file = JSON.parse(fs.readFileSync(path.join(q.path, q.filename), "utf8"));
    expect(file.topology.drawings).toEqual([note, image]);

    const exported = await fetch(`${s.url}${Q}/export`);
    const entries = await unzip(Buffer.from(await exported.arrayBuffer()));
    expect(JSON.parse(entries[0].data.toString()).topology.drawings).toEqual([note, image]);

    const imported = randomUUID();
    const zip = Buffer.from(await (await fetch(`${s.url}${Q}/export`)).arrayBuffer());
    const r = await fetch(`${s.url}/v2/projects/${imported}/import?name=drawings-imported`, { method: "POST", body: zip });
    expect(r.status).toBe(201);
    await call(s.url, "POST", `/v2/projects/${imported}/open`);
    const importedDrawings = (await call(s.url, "GET", `/v2/projects/${imported}/drawings`)).body;
    expect(importedDrawings.map(({ drawing_id, project_id, ...d }: any) => d)).toEqual([note, image].map(({ drawing_id, ...d }) => d));
    expect(importedDrawings.map((d: any) => d.drawing_id)).not.toContain(note.drawing_id);

    const dup = (await call(s.url, "POST", `${Q}/duplicate`, { name: "drawings-copy" })).body;
    await call(s.url, "POST", `/v2/projects/${dup.project_id}/open`);
    expect((await call(s.url, "GET", `/v2/projects/${dup.project_id}/drawings`)).body.map((d: any) => d.svg)).toEqual([GUI_SVG.note, GUI_SVG.image]);
  });

  describe("archives written by GNS3", () => {
    /** A 3×2 PNG and what GNS3 serves for it once it is a picture file (compat §5.3). */
    const png = Buffer.from(
      "89504e470d0a1a0a0000000d49484452000000030000000208060000009d74661a0000001149444154789c63f8cfc0f01f86199039009b7e0bf572b0b93c0000000049454e44ae426082",
      "hex",
    );
    const pictureSvg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" height="2" width="3">\n<image height="2" width="3" xlink:href="data:image/png;base64,${png.toString("base64")}" />\n</svg>`;
    const bigSvg = `<svg width="10" height="10">${"<rect width=\"1\" height=\"1\" />".repeat(60)}</svg>`;
    const document = (drawings: object[]) => ({
      project_id: randomUUID(), name: "from-gns3", type: "topology", revision: 9, version: "2.2.59",
      topology: { nodes: [], links: [], computes: [], drawings },
    });
    const drawing = (svg: string) => ({ drawing_id: randomUUID(), x: 0, y: 0, z: 2, locked: false, rotation: 0, svg });
    const importArchive = async (files: Record<string, string | Buffer>) => {
      const id = randomUUID();
      const r = await fetch(`${s.url}/v2/projects/${id}/import`, { method: "POST", body: new Uint8Array(await zip(files)) });
      return { id, status: r.status, body: (await r.json()) as any };
    };

    it("puts pictures kept in project-files/images back inline, as GNS3 serves them", async () => {
      const [picture, large] = [drawing("0f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e.png"), drawing("a1b2c3d4e5f60718293a4b5c6d7e8f90.svg")];
      const r = await importArchive({
        "project.gns3": JSON.stringify(document([picture, large])),
        "project-files/images/0f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e.png": png,
        "project-files/images/a1b2c3d4e5f60718293a4b5c6d7e8f90.svg": bigSvg,
      });
      expect(r.status).toBe(201);
      await call(s.url, "POST", `/v2/projects/${r.id}/open`);
      const got = (await call(s.url, "GET", `/v2/projects/${r.id}/drawings`)).body;
      expect(got.map((d: any) => d.svg)).toEqual([pictureSvg, bigSvg]);
    });

    it("refuses (409) a drawing whose SVG breaks the rules, or whose picture is missing, and leaves nothing behind", async () => {
      const scripted = await importArchive({ "project.gns3": JSON.stringify(document([drawing(`<svg onload="alert(1)"></svg>`)])) });
      expect(scripted.status).toBe(409);
      expect(scripted.body.message).toBe("Invalid topology file: topology.drawings.0.svg: Invalid SVG: event handler attribute onload is not allowed");
      expect((await call(s.url, "GET", `/v2/projects/${scripted.id}`)).status).toBe(404);
      const lost = drawing("0f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e.png");
      const missing = await importArchive({ "project.gns3": JSON.stringify(document([lost])) });
      expect(missing.status).toBe(409);
      expect(missing.body.message).toBe(
        `Cannot import project, drawing ${lost.drawing_id} shows the picture 0f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e.png, which the archive does not hold`,
      );
    });
  });
});

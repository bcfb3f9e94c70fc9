// The lab page (/lab): Patchbay's GraphQL API and nothing else, over one graphql-ws connection to /graphql —
// projects, a project's topology kept live by `projectEvents`, node start/stop/reload, a node console
// (`nodeConsole` + `sendNodeConsoleInput`, in xterm.js), a link's packets (`linkPackets`) and a volume's quota
// rules with their changes (`quotaChanges`). Bundled by scripts/build-lab.mjs into dist/lab/.
import cytoscape from "cytoscape";
import { createClient, type Client } from "graphql-ws";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";
import "./lab.css";

// ---------------------------------------------------------------------------------------------------------------
// GraphQL

type Vars = Record<string, unknown>;
interface Result {
  __typename: string;
  message?: string;
}

const connectionEl = document.getElementById("connection")!;
function setConnection(state: "connecting" | "connected" | "closed", text: string) {
  connectionEl.dataset.state = state;
  connectionEl.textContent = text;
}

const client: Client = createClient({
  url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
  lazy: false, // one socket for the page's life (it always watches something), so "live" means live
  retryAttempts: Infinity,
  shouldRetry: () => true,
  retryWait: async (retries) => new Promise((r) => setTimeout(r, Math.min(500 * 2 ** retries, 5000))),
  on: {
    connecting: () => setConnection("connecting", "connecting…"),
    connected: () => {
      setConnection("connected", "live");
      // After a reconnect graphql-ws subscribes again, but what changed meanwhile was missed: read it all anew.
      if (connections++ > 0) onReconnect();
    },
    closed: (e) => {
      const { code, reason } = (e ?? {}) as CloseEvent;
      console.warn(`GraphQL socket closed: ${code ?? ""} ${reason ?? ""}`);
      setConnection("closed", "disconnected — retrying");
    },
  },
});

let connections = 0;
let onReconnect = () => {};

const errorText = (e: unknown): string =>
  Array.isArray(e) ? e.map((x) => x?.message ?? String(x)).join("; ") : e instanceof Error ? e.message : (e as any)?.reason || String(e);

/** One query or mutation over the socket: its `data`, or the GraphQL errors thrown. */
function request(query: string, variables: Vars = {}): Promise<any> {
  return new Promise((resolve, reject) => {
    let result: any;
    client.subscribe(
      { query, variables },
      {
        next: (v) => (result = v),
        error: (e) => reject(new Error(errorText(e))),
        complete: () => (result?.errors ? reject(new Error(errorText(result.errors))) : resolve(result?.data)),
      },
    );
  });
}

/** A mutation's payload (the changed entity under its name), or its typed error thrown. */
function unwrap(r: Result): any {
  if (r.__typename.endsWith("Payload")) return r;
  throw new Error(r.message ?? r.__typename);
}

/** A subscription: `onItem` per item (a union member), `onEnd` once it completes or fails. Returns its closer. */
function subscribe(query: string, variables: Vars, onItem: (r: any) => void, onEnd: (error?: string) => void): () => void {
  return client.subscribe(
    { query, variables },
    {
      next: (v) => {
        if (v.errors) onEnd(errorText(v.errors));
        else onItem(Object.values(v.data ?? {})[0]);
      },
      error: (e) => onEnd(errorText(e)),
      complete: () => onEnd(),
    },
  );
}

const ERR = "... on Error { message }";
const NODE = "id name nodeType status x y z widthPixels heightPixels consoleType";
const DRAWING = "id x y z rotationDegrees svg";
const LINK = "id capturing endpoints { adapterNumber portNumber node { id } }";

/** A page of a connection as the lab reads it: the most a page holds, and where the next one starts. */
type Page<T = any> = { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: T }[] };
const page = (field: string, selection: string, after = "") =>
  `${field}(first: 100${after && `, after: ${after}`}) { pageInfo { hasNextPage endCursor } edges { node { ${selection} } } }`;

/** Every element of a connection whose first page is `first`; `next(after)` reads the page after a cursor. */
async function allPages<T = any>(first: Page<T>, next: (after: string) => Promise<Page<T>>): Promise<T[]> {
  const all = first.edges.map((e) => e.node);
  for (let p = first; p.pageInfo.hasNextPage && p.pageInfo.endCursor; ) {
    p = await next(p.pageInfo.endCursor);
    all.push(...p.edges.map((e) => e.node));
  }
  return all;
}

// ---------------------------------------------------------------------------------------------------------------
// Page state and small DOM helpers

const $ = <T extends HTMLElement = HTMLElement>(sel: string) => document.querySelector<T>(sel)!;
const messageEl = $("#message");
function say(text: string, isError = false) {
  messageEl.textContent = text;
  messageEl.classList.toggle("error", isError);
}
function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

interface LabNode {
  id: string;
  name: string;
  nodeType: string;
  status: string;
  x: number;
  y: number;
  z: number;
  widthPixels: number;
  heightPixels: number;
  consoleType: string | null;
}
interface LabLink {
  id: string;
  capturing: boolean;
  ends: { nodeId: string; adapterNumber: number; portNumber: number }[];
}

let projectId: string | undefined;
const nodes = new Map<string, LabNode>();
const links = new Map<string, LabLink>();
let selectedNode: string | undefined;
let selectedLink: string | undefined;
let stopEvents: (() => void) | undefined;

// ---------------------------------------------------------------------------------------------------------------
// The topology (cytoscape). GNS3 places a node by its top-left corner; cytoscape by its centre.

const STATUS_COLOR: Record<string, string> = { STARTED: "#2e9d44", STOPPED: "#c62828", SUSPENDED: "#e0a100" };
const SHAPE: Record<string, string> = { ethernet_switch: "rectangle", ethernet_hub: "ellipse", cloud: "round-hexagon", nat: "hexagon" };

const cy = cytoscape({
  container: $("#topology"),
  boxSelectionEnabled: false,
  autoungrabify: true, // positions are the server's: the page shows them, it does not move nodes
  style: [
    {
      selector: "node.lab-node",
      style: {
        label: "data(label)",
        "text-valign": "bottom",
        "text-margin-y": 4,
        "font-size": 12,
        width: "data(w)",
        height: "data(h)",
        shape: "data(shape)" as any,
        "background-color": "data(color)",
        "border-width": 2,
        "border-color": "#333",
      },
    },
    { selector: "node.lab-node:selected", style: { "border-color": "#1565c0", "border-width": 4 } },
    {
      selector: "node.drawing",
      style: { "background-opacity": 0, "background-image": "data(image)", "background-fit": "contain", width: "data(w)", height: "data(h)", events: "no", "z-compound-depth": "bottom" } as any,
    },
    { selector: "edge", style: { width: 3, "line-color": "#777", "curve-style": "bezier" } },
    { selector: "edge.capturing", style: { "line-style": "dashed", "line-color": "#1565c0" } },
    { selector: "edge:selected", style: { "line-color": "#1565c0", width: 5 } },
  ],
});
// The page's handles, for a look from the browser's console (and the browser tests): read-only use.
(window as any).patchbayLab = { cy, nodes, links };

const nodeData = (n: LabNode) => ({
  id: n.id,
  label: n.name,
  status: n.status,
  color: STATUS_COLOR[n.status] ?? "#888",
  shape: SHAPE[n.nodeType] ?? "round-rectangle",
  w: Math.max(20, n.widthPixels || 40),
  h: Math.max(20, n.heightPixels || 40),
});
const nodeCentre = (n: LabNode) => ({ x: n.x + (n.widthPixels || 40) / 2, y: n.y + (n.heightPixels || 40) / 2 });

function putNode(n: LabNode) {
  nodes.set(n.id, n);
  const existing = cy.getElementById(n.id);
  if (existing.nonempty()) {
    existing.data(nodeData(n));
    existing.position(nodeCentre(n));
  } else cy.add({ group: "nodes", data: nodeData(n), position: nodeCentre(n), classes: "lab-node" });
  renderLists();
}
function removeNode(id: string) {
  nodes.delete(id);
  cy.getElementById(id).remove(); // its edges go with it
  for (const [lid, l] of links) if (l.ends.some((e) => e.nodeId === id)) links.delete(lid);
  if (selectedNode === id) selectNode(undefined);
  renderLists();
}
function putLink(l: LabLink) {
  links.set(l.id, l);
  const [a, b] = l.ends;
  const existing = cy.getElementById(l.id);
  if (!a || !b || !nodes.has(a.nodeId) || !nodes.has(b.nodeId)) {
    existing.remove(); // a link with one end attached is not drawn yet
  } else if (existing.empty()) {
    cy.add({ group: "edges", data: { id: l.id, source: a.nodeId, target: b.nodeId }, classes: l.capturing ? "capturing" : "" });
  } else existing.toggleClass("capturing", l.capturing);
  renderLists();
}
function removeLink(id: string) {
  links.delete(id);
  cy.getElementById(id).remove();
  if (selectedLink === id) selectLink(undefined);
  renderLists();
}

/** A drawing's SVG as an image (an <img> runs no script), sized by its width and height attributes. */
function putDrawing(d: { id: string; x: number; y: number; z: number; rotationDegrees: number; svg: string }) {
  const doc = new DOMParser().parseFromString(d.svg, "image/svg+xml");
  const root = doc.documentElement;
  const w = Number(root.getAttribute("width")) || 100;
  const h = Number(root.getAttribute("height")) || 40;
  // GNS3 writes its SVG without a namespace; as an image, SVG needs one.
  if (!root.getAttribute("xmlns")) root.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  const svg = new XMLSerializer().serializeToString(root);
  const data = { id: `drawing-${d.id}`, image: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`, w, h };
  const existing = cy.getElementById(data.id);
  if (existing.nonempty()) existing.data(data).position({ x: d.x + w / 2, y: d.y + h / 2 });
  else cy.add({ group: "nodes", data, position: { x: d.x + w / 2, y: d.y + h / 2 }, classes: "drawing", selectable: false });
}

cy.on("tap", "node.lab-node", (e) => selectNode(e.target.id()));
cy.on("tap", "edge", (e) => selectLink(e.target.id()));

// ---------------------------------------------------------------------------------------------------------------
// Lists beside the graph (the same state, readable and clickable)

const endName = (e: LabLink["ends"][number]) => `${nodes.get(e.nodeId)?.name ?? "?"} ${e.adapterNumber}/${e.portNumber}`;
const linkName = (l: LabLink) => l.ends.map(endName).join(" ↔ ");

function renderLists() {
  const nodeList = $("#nodes");
  nodeList.replaceChildren(
    ...[...nodes.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((n) => {
        const li = el("li", { className: n.id === selectedNode ? "selected" : "" }, el("span", { className: "dot" }), el("span", { className: "name", textContent: n.name }), el("span", { className: "status", textContent: n.status.toLowerCase() }));
        li.dataset.id = n.id;
        li.dataset.status = n.status;
        li.onclick = () => selectNode(n.id);
        return li;
      }),
  );
  $("#links").replaceChildren(
    ...[...links.values()].map((l) => {
      const li = el("li", { className: l.id === selectedLink ? "selected" : "", textContent: linkName(l) + (l.capturing ? " ●" : "") });
      li.dataset.id = l.id;
      li.onclick = () => selectLink(l.id);
      return li;
    }),
  );
  const n = selectedNode ? nodes.get(selectedNode) : undefined;
  $("#selected-node").textContent = n?.name ?? "—";
  for (const b of document.querySelectorAll<HTMLButtonElement>("button[data-node]")) b.disabled = !n;
  $<HTMLButtonElement>("#open-console").disabled = !n || n.status !== "STARTED" || n.consoleType !== "TELNET";
  const l = selectedLink ? links.get(selectedLink) : undefined;
  $("#selected-link").textContent = l ? linkName(l) : "—";
  $<HTMLButtonElement>("#watch-packets").disabled = !l;
  for (const b of document.querySelectorAll<HTMLButtonElement>("button[data-all]")) b.disabled = !projectId;
}

function selectNode(id: string | undefined) {
  selectedNode = id;
  cy.$("node:selected").unselect();
  if (id) cy.getElementById(id).select();
  renderLists();
}
function selectLink(id: string | undefined) {
  selectedLink = id;
  cy.$("edge:selected").unselect();
  if (id) cy.getElementById(id).select();
  renderLists();
}

// ---------------------------------------------------------------------------------------------------------------
// Projects

async function loadProjects() {
  const first = (await request(`{ ${page("projects", "id name status")} }`)).projects;
  const projects = await allPages(first, async (after) => (await request(`query($after: String) { ${page("projects", "id name status", "$after")} }`, { after })).projects);
  $("#projects").replaceChildren(
    ...(projects as { id: string; name: string; status: string }[])
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((p) => {
        const li = el("li", { className: p.id === projectId ? "selected" : "", textContent: p.name });
        li.dataset.id = p.id;
        li.title = p.status.toLowerCase();
        li.onclick = () => void openProject(p.id).catch((e) => say(`Cannot open the project: ${errorText(e)}`, true));
        return li;
      }),
  );
  if (!projects.length) say("No project yet: create one with the GNS3 GUI, the REST API or GraphQL.");
}

/** A link as the page draws it; its ends name their nodes by global id, as `nodes` is keyed. */
const labLink = (l: any): LabLink => ({
  id: l.id,
  capturing: l.capturing,
  ends: l.endpoints.map((e: any) => ({ nodeId: e.node.id, adapterNumber: e.adapterNumber, portNumber: e.portNumber })),
});

/** Shows project `id`; `refresh`: the same project read anew (after a reconnect), its console and packets kept. */
async function openProject(id: string, refresh = false) {
  stopEvents?.();
  stopEvents = undefined;
  if (!refresh) {
    closeConsole();
    closePackets();
    selectedNode = selectedLink = undefined;
  }
  projectId = id;
  nodes.clear();
  links.clear();
  cy.elements().remove();
  say("Opening…");
  // A closed project shows no nodes: open it (as the GNS3 GUI does when it shows one).
  unwrap((await request(`mutation($id: ID!) { openProject(input: { id: $id }) { __typename ${ERR} } }`, { id })).openProject);
  // Events first, then the snapshot: what changes meanwhile is applied twice, never missed.
  startEvents(id);
  // One request for a project of up to 100 nodes, links and drawings; the pages after those, one request each.
  const TOPOLOGY = { nodes: NODE, links: LINK, drawings: DRAWING };
  const { project } = await request(
    `query($id: ID!) { project(id: $id) { id name ${Object.entries(TOPOLOGY).map(([field, selection]) => page(field, selection)).join(" ")} } }`,
    { id },
  );
  if (projectId !== id) return;
  if (!project) throw new Error("no such project");
  const [drawingList, nodeList, linkList] = await Promise.all(
    (["drawings", "nodes", "links"] as const).map((field) =>
      allPages<any>(project[field], async (after) => (await request(`query($id: ID!, $after: String) { project(id: $id) { ${page(field, TOPOLOGY[field], "$after")} } }`, { id, after })).project[field]),
    ),
  );
  if (projectId !== id) return;
  $("#project-name").textContent = project.name;
  document.title = `${project.name} — Patchbay lab`;
  for (const d of drawingList) putDrawing(d);
  for (const n of nodeList) putNode(n);
  for (const l of linkList) putLink(labLink(l));
  if (selectedNode && !nodes.has(selectedNode)) selectedNode = undefined;
  if (selectedLink && !links.has(selectedLink)) selectedLink = undefined;
  for (const sel of [selectedNode, selectedLink]) if (sel) cy.getElementById(sel).select();
  if (!refresh) {
    cy.fit(undefined, 40);
    if (cy.zoom() > 1.5) cy.zoom(1.5).center();
  }
  document.querySelectorAll<HTMLElement>("#projects li").forEach((li) => li.classList.toggle("selected", li.dataset.id === id));
  say(`${nodeList.length} nodes, ${linkList.length} links.`);
  renderLists();
}

const EVENTS = `subscription($p: ID!) { projectEvents(projectId: $p) { __typename
  ... on SubscriptionProjectEventsSuccess { data { __typename action
    ... on NodeEvent { kind node { ${NODE} } }
    ... on LinkEvent { kind link { ${LINK} } }
    ... on DrawingEvent { kind drawing { ${DRAWING} } }
    ... on ProjectEvent { kind } } }
  ${ERR} } }`;

function startEvents(id: string) {
  const stop = subscribe(
    EVENTS,
    { p: id },
    (r) => {
      if (projectId !== id) return;
      if (r.__typename !== "SubscriptionProjectEventsSuccess") return say(`Project events: ${r.message}`, true);
      const e = r.data;
      switch (e.__typename) {
        case "NodeEvent":
          if (e.kind === "DELETED") removeNode(e.node.id);
          else putNode(e.node);
          break;
        case "LinkEvent":
          if (e.kind === "DELETED") removeLink(e.link.id);
          else putLink(labLink(e.link));
          break;
        case "DrawingEvent":
          if (e.kind === "DELETED") cy.getElementById(`drawing-${e.drawing.id}`).remove();
          else putDrawing(e.drawing);
          break;
        case "ProjectEvent":
          if (e.kind === "CLOSED" || e.kind === "DELETED") say(`The project was ${e.kind.toLowerCase()} elsewhere.`, true);
          if (e.kind === "DELETED") void loadProjects();
          break;
      }
    },
    (error) => {
      if (projectId !== id || stopEvents !== stop) return;
      // The stream ended (server restart, project closed): reload the project, which subscribes again.
      say(`Live updates stopped${error ? `: ${error}` : ""}; reloading…`, Boolean(error));
      setTimeout(() => projectId === id && void openProject(id, true).catch((e) => say(errorText(e), true)), 2000);
    },
  );
  stopEvents = stop;
}

// ---------------------------------------------------------------------------------------------------------------
// Start, stop, reload

const MUTATION: Record<string, string> = { start: "startNode", stop: "stopNode", reload: "reloadNode" };
for (const b of document.querySelectorAll<HTMLButtonElement>("button[data-node]")) {
  b.onclick = async () => {
    const node = selectedNode && nodes.get(selectedNode);
    if (!node || !projectId) return;
    const field = MUTATION[b.dataset.node!];
    b.disabled = true;
    say(`${b.textContent} ${node.name}…`);
    try {
      unwrap((await request(`mutation($n: ID!) { ${field}(input: { id: $n }) { __typename ${ERR} } }`, { n: node.id }))[field]);
      say(`${node.name}: ${b.dataset.node} done.`);
    } catch (e) {
      say(`${node.name}: ${errorText(e)}`, true);
    } finally {
      renderLists();
    }
  };
}
for (const b of document.querySelectorAll<HTMLButtonElement>("button[data-all]")) {
  b.onclick = async () => {
    if (!projectId) return;
    say(`${b.textContent} all…`);
    try {
      unwrap(
        (await request(`mutation($p: ID!, $a: NodeLifecycleAction!) { projectNodesAction(input: { projectId: $p, action: $a }) { __typename ${ERR} } }`, { p: projectId, a: b.dataset.all })).projectNodesAction,
      );
      say(`${b.textContent} all: done.`);
    } catch (e) {
      say(`${b.textContent} all: ${errorText(e)}`, true);
    }
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Console: `nodeConsole` streams the console's output (telnet commands removed in `text`); keystrokes go back with
// `sendNodeConsoleInput` on the same connection, one at a time and in order.

const term = new Terminal({ fontSize: 13, convertEol: false, cursorBlink: true, scrollback: 2000, theme: { background: "#1e1e1e" } });
const fit = new FitAddon();
term.loadAddon(fit);
term.open($("#terminal"));
fit.fit();
new ResizeObserver(() => fit.fit()).observe($("#terminal"));
(window as any).patchbayLab.term = term;

let consoleSession: string | undefined;
let closeConsoleStream: (() => void) | undefined;
let pendingInput = "";
let sending = false;

async function flushInput() {
  if (sending || !consoleSession || !pendingInput) return;
  sending = true;
  const text = pendingInput;
  pendingInput = "";
  try {
    unwrap((await request(`mutation($s: ID!, $t: String) { sendNodeConsoleInput(input: { session: $s, text: $t }) { __typename ${ERR} } }`, { s: consoleSession, t: text })).sendNodeConsoleInput);
  } catch (e) {
    term.write(`\r\n\x1b[31m[input not sent: ${errorText(e)}]\x1b[0m\r\n`);
  } finally {
    sending = false;
    void flushInput();
  }
}
term.onData((d) => {
  pendingInput += d;
  void flushInput();
});

function closeConsole() {
  closeConsoleStream?.();
  closeConsoleStream = undefined;
  consoleSession = undefined;
  pendingInput = "";
}

$("#open-console").onclick = () => {
  const node = selectedNode && nodes.get(selectedNode);
  if (!node || !projectId) return;
  closeConsole();
  term.reset();
  $("#console-title").textContent = `— ${node.name}`;
  term.write(`\x1b[90m[connecting to ${node.name}…]\x1b[0m\r\n`);
  const stop = subscribe(
    `subscription($n: ID!) { nodeConsole(id: $n) { __typename ... on NodeConsoleOutput { session text } ${ERR} } }`,
    { n: node.id },
    (r) => {
      if (r.__typename !== "NodeConsoleOutput") return term.write(`\x1b[31m[${r.message}]\x1b[0m\r\n`);
      if (consoleSession !== r.session) {
        // The first item; after a reconnect, the new connection's console (a session of its own).
        consoleSession = r.session;
        term.write(`\x1b[90m[connected]\x1b[0m\r\n`);
        term.focus();
        void flushInput();
      }
      if (r.text) term.write(r.text);
    },
    (error) => {
      if (closeConsoleStream !== stop) return;
      consoleSession = undefined;
      term.write(`\r\n\x1b[90m[console closed${error ? `: ${error}` : ""}]\x1b[0m\r\n`);
    },
  );
  closeConsoleStream = stop;
};

// ---------------------------------------------------------------------------------------------------------------
// Packets of a link: its capture is started if none runs, then `linkPackets` streams its frames decoded.

const PACKETS = `subscription($l: ID!) { linkPackets(id: $l) { __typename
  ... on LinkPacket { number dropped time lengthBytes ethernet { src dst etherType } arp { operation senderIp targetIp }
    ipv4 { protocol src dst ttl } icmp { type code } tcp { srcPort dstPort } udp { srcPort dstPort } }
  ${ERR} } }`;
let closePacketStream: (() => void) | undefined;
const packetRows = $("#packets tbody");

function closePackets() {
  closePacketStream?.();
  closePacketStream = undefined;
}

function describePacket(p: any): [string, string, string] {
  const ICMP: Record<number, string> = { 0: "ICMP echo reply", 8: "ICMP echo request", 3: "ICMP unreachable", 11: "ICMP time exceeded" };
  if (p.arp) return [p.arp.senderIp, p.arp.targetIp, p.arp.operation === 1 ? `ARP who has ${p.arp.targetIp}?` : `ARP ${p.arp.senderIp} is at ${p.ethernet?.src ?? "?"}`];
  if (p.ipv4) {
    const what = p.icmp ? (ICMP[p.icmp.type] ?? `ICMP type ${p.icmp.type}`) : p.tcp ? `TCP ${p.tcp.srcPort} → ${p.tcp.dstPort}` : p.udp ? `UDP ${p.udp.srcPort} → ${p.udp.dstPort}` : `IP protocol ${p.ipv4.protocol}`;
    return [p.ipv4.src, p.ipv4.dst, `${what}, ttl ${p.ipv4.ttl}`];
  }
  if (p.ethernet) return [p.ethernet.src, p.ethernet.dst, `Ethernet type 0x${p.ethernet.etherType.toString(16).padStart(4, "0")}`];
  return ["", "", `${p.lengthBytes} bytes`];
}

$("#watch-packets").onclick = async () => {
  const link = selectedLink && links.get(selectedLink);
  if (!link || !projectId) return;
  closePackets();
  packetRows.replaceChildren();
  $("#packets-title").textContent = `— ${linkName(link)}`;
  try {
    if (!link.capturing)
      unwrap((await request(`mutation($l: ID!) { startCapture(input: { id: $l }) { __typename ${ERR} } }`, { l: link.id })).startCapture);
  } catch (e) {
    return say(`Capture: ${errorText(e)}`, true);
  }
  const stop = subscribe(
    PACKETS,
    { l: link.id },
    (p) => {
      if (p.__typename !== "LinkPacket") return say(`Packets: ${p.message}`, true);
      const [src, dst, what] = describePacket(p);
      const row = el("tr", {}, ...[String(p.number), new Date(p.time).toLocaleTimeString(), src, dst, what + (p.dropped ? ` (${p.dropped} missed before)` : "")].map((t) => el("td", { textContent: t })));
      packetRows.append(row);
      while (packetRows.childElementCount > 500) packetRows.firstElementChild!.remove();
      row.scrollIntoView({ block: "nearest" });
    },
    (error) => {
      if (closePacketStream === stop) say(`The capture ended${error ? `: ${error}` : ""}.`, Boolean(error));
    },
  );
  closePacketStream = stop;
};

// ---------------------------------------------------------------------------------------------------------------
// Quota rules of a volume, kept live by `quotaChanges`

const RULE = "uuid type qtreeName users { name id } group { name id } spaceHardLimitBytes filesHardLimit";
const rules = new Map<string, any>();
let closeRuleStream: (() => void) | undefined;
const volumeSelect = $<HTMLSelectElement>("#volumes");

function formatBytes(v: number | string | null): string {
  if (v === null || v === undefined) return "—";
  let n = Number(v);
  for (const unit of ["B", "KiB", "MiB", "GiB", "TiB"]) {
    if (n < 1024 || unit === "TiB") return `${Number.isInteger(n) ? n : n.toFixed(1)} ${unit}`;
    n /= 1024;
  }
  return String(v);
}
function renderRules() {
  $("#rules tbody").replaceChildren(
    ...[...rules.values()].map((r) => {
      const target = r.type === "TREE" ? r.qtreeName || "(default)" : `${(r.type === "USER" ? r.users.map((u: any) => u.name ?? u.id).join(",") : (r.group?.name ?? r.group?.id)) || "(default)"}${r.qtreeName ? ` @ ${r.qtreeName}` : ""}`;
      const tr = el("tr", {}, ...[r.type.toLowerCase(), target, formatBytes(r.spaceHardLimitBytes), r.filesHardLimit ?? "—"].map((t) => el("td", { textContent: String(t) })));
      tr.dataset.uuid = r.uuid;
      return tr;
    }),
  );
}

async function loadVolumes() {
  const first = (await request(`{ ${page("volumes", "uuid name svm { name }")} }`)).volumes;
  const volumes = await allPages(first, async (after) => (await request(`query($after: String) { ${page("volumes", "uuid name svm { name }", "$after")} }`, { after })).volumes);
  volumeSelect.replaceChildren(
    el("option", { value: "", textContent: volumes.length ? "— volume —" : "no volume" }),
    ...volumes.map((v: any) => el("option", { value: v.uuid, textContent: `${v.svm.name}:${v.name}` })),
  );
}

volumeSelect.onchange = async () => {
  closeRuleStream?.();
  closeRuleStream = undefined;
  rules.clear();
  renderRules();
  const volumeUuid = volumeSelect.value;
  if (!volumeUuid) return;
  let stop: () => void = () => {};
  stop = subscribe(
    `subscription($v: ID!) { quotaChanges(volumeId: $v) { kind ruleUuid rule { ${RULE} } } }`,
    { v: volumeUuid },
    (c) => {
      if (c.kind === "RULE_DELETED") rules.delete(c.ruleUuid);
      else if (c.rule) rules.set(c.rule.uuid, c.rule);
      renderRules();
    },
    (error) => closeRuleStream === stop && error && say(`Quota changes: ${error}`, true),
  );
  closeRuleStream = stop;
  try {
    // Subscribed first: a rule changed while the list loads is not missed (a change applied twice is harmless).
    const { quotaRules } = await request(`query($v: String!) { quotaRules(first: 100, filter: { volumeUuid: { eq: $v } }) { edges { node { ${RULE} } } } }`, { v: volumeUuid });
    for (const { node } of quotaRules.edges) if (!rules.has(node.uuid)) rules.set(node.uuid, node);
    renderRules();
  } catch (e) {
    say(`Quota rules: ${errorText(e)}`, true);
  }
};

// ---------------------------------------------------------------------------------------------------------------

onReconnect = () => {
  void loadProjects().catch(() => {});
  if (projectId) void openProject(projectId, true).catch((e) => say(errorText(e), true));
  if (volumeSelect.value) void volumeSelect.onchange?.(new Event("change"));
};

renderLists();
Promise.all([loadProjects(), loadVolumes()])
  .then(() => {
    const wanted = new URLSearchParams(location.search).get("project");
    if (wanted) return openProject(wanted);
  })
  .catch((e) => say(`Cannot reach the GraphQL API: ${errorText(e)}`, true));

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_TYPES } from "../../src/emulation/node-model/vocabularies.js";
import { NOT_RUN_HERE } from "../../src/emulation/runtime/drivers/not-run.js";
import { consoleRules, driverFor, isAlwaysOn, listedNodeTypes, runnableTypes, runnableTypesInWords } from "../../src/emulation/runtime/drivers/registry.js";

const SRC = path.resolve(import.meta.dirname, "../../src");
const DRIVERS_DIR = "emulation/runtime/drivers/";

/**
 * Node-type knowledge lives in the node drivers (src/emulation/runtime/drivers/): elsewhere nothing compares a
 * node type with a type's name, switches on one or lists types, so adding a type is adding a driver. What is
 * left elsewhere is listed here with the reason; an entry nothing matches any more must go.
 */
const ALLOWED: { file: string; line?: string; why: string }[] = [
  { file: "emulation/node-model/vocabularies.ts", why: "the GNS3 v2 vocabulary of node types (the wire enum)" },
  { file: "emulation/node-model/ports.ts", why: "GNS3's port layout of every node type, whichever compute runs it" },
  { file: "emulation/node-model/serialize.ts", line: "BUILTIN_TYPES", why: "GNS3's node model: types without node directory nor command line, on any compute" },
  { file: "emulation/links/filters.ts", line: "FILTERING_NODE_TYPES", why: "GNS3's rule of which types take link filters, on any compute" },
  { file: "emulation/links/operations.ts", line: "CLOUDS", why: "GNS3's link rule for clouds and NATs, on any compute" },
  { file: "emulation/nodes/operations.ts", line: '=== "qemu"', why: "the qemu properties contract, not yet a driver's" },
  { file: "emulation/topology-file/export.ts", line: '=== "iou"', why: "the .gns3 format: where an IOU node names its image" },
  { file: "emulation/computes/forwarding.ts", line: '["qemu", "dynamips", "iou"]', why: "image directories (emulators), not node types" },
  { file: "emulation/simvm/operations.ts", line: "ENGINES", why: "GNS3 VM engines, not node types" },
];

const TYPE = `"(?:${NODE_TYPES.join("|")})"`;
const PATTERNS = [
  new RegExp(`\\w*[tT]ype\\s*[!=]==?\\s*${TYPE}`, "g"), // nodeType === "vpcs"
  new RegExp(`case\\s+${TYPE}\\s*:`, "g"), // case "vpcs":
  new RegExp(`\\[\\s*${TYPE}\\s*,\\s*${TYPE}`, "g"), // ["vpcs", "qemu", …], new Set([…]), even across lines
];

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sources(p);
    return p.endsWith(".ts") ? [p] : [];
  });
}

/** Every place outside drivers/ that names node types, as `file: line`. */
function nodeTypeBranches(): { file: string; text: string }[] {
  return sources()
    .map((p) => path.relative(SRC, p))
    .filter((file) => !file.startsWith(DRIVERS_DIR))
    .flatMap((file) => {
      const text = fs.readFileSync(path.join(SRC, file), "utf8");
      return PATTERNS.flatMap((re) =>
        [...text.matchAll(re)].map((m) => {
          const start = text.lastIndexOf("\n", m.index) + 1;
          const end = text.indexOf("\n", m.index + m[0].length);
          return { file, text: text.slice(start, end === -1 ? undefined : end).trim() };
        }),
      );
    });
}

describe("unit: node drivers", () => {
  it("only the drivers branch on node types or list them (the rest is allowed here with its reason)", () => {
    const found = nodeTypeBranches();
    const allowed = (f: { file: string; text: string }) => ALLOWED.some((a) => a.file === f.file && (!a.line || f.text.includes(a.line)));
    expect(found.filter((f) => !allowed(f)).map((f) => `${f.file}: ${f.text}`)).toEqual([]);
    const stale = ALLOWED.filter((a) => !found.some((f) => a.file === f.file && (!a.line || f.text.includes(a.line))));
    expect(stale).toEqual([]);
  });

  it("the search finds a branch where there is one", () => {
    const sample = 'if (node.nodeType === "vpcs") x();\nconst S = new Set([\n  "ethernet_hub",\n  "ethernet_switch",\n]);\nswitch (t) { case "qemu": }';
    expect(PATTERNS.map((re) => [...sample.matchAll(re)].length)).toEqual([1, 1, 1]);
  });

  it("every GNS3 node type has a driver or is listed as not run here, never both", () => {
    for (const type of NODE_TYPES) expect([type, Boolean(driverFor(type)) !== Boolean(NOT_RUN_HERE[type])]).toEqual([type, true]);
    expect(Object.keys(NOT_RUN_HERE).filter((t) => !(NODE_TYPES as readonly string[]).includes(t))).toEqual([]);
  });

  it("keeps GNS3's orders and words: messages, capabilities, always-on devices, console defaults", () => {
    expect(runnableTypes()).toEqual(["vpcs", "qemu", "docker", "ethernet_hub", "ethernet_switch", "cloud", "nat"]);
    expect(runnableTypesInWords()).toBe("vpcs, qemu, docker, ethernet_hub, ethernet_switch, cloud and nat");
    const host = { local: true, nat: { natInterface: "virbr0", bridge: "pbnat0", subnet: "192.168.122.0/24" } };
    expect(listedNodeTypes(host).slice(0, 3)).toEqual(["vpcs", "ethernet_hub", "ethernet_switch"]);
    // qemu, docker, cloud and nat come after them, when the host has what they need.
    expect(listedNodeTypes(host).slice(3).every((t) => ["qemu", "docker", "cloud", "nat"].includes(t))).toBe(true);
    expect(NODE_TYPES.filter(isAlwaysOn)).toEqual(["cloud", "nat", "ethernet_hub", "ethernet_switch"]);
    expect(Object.fromEntries(NODE_TYPES.map((t) => [t, consoleRules(t).default]))).toEqual({
      cloud: null,
      nat: null,
      ethernet_hub: null,
      ethernet_switch: "none",
      frame_relay_switch: null,
      atm_switch: null,
      docker: "telnet",
      dynamips: "telnet",
      vpcs: "telnet",
      traceng: "none",
      virtualbox: "telnet",
      vmware: "telnet",
      iou: "telnet",
      qemu: "telnet",
    });
  });
});

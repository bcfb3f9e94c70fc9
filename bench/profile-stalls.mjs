// Event-loop stalls in a V8 CPU profile (run: `node bench/profile-stalls.mjs <file.cpuprofile> [min ms] [after s]`).
// A stall is a run of samples with no idle one; for each run of at least `min ms` (default 60) that starts `after s`
// into the profile (default 0), it prints the project functions that ran in it (inclusive) and the hottest frames
// (self), then the same summed over all such runs. Made for `bench/soak.ts --cpu-prof <dir>`: it found the
// synchronous /proc scans behind the soak's latency tail (docs/benchmarks.md).
import fs from "node:fs";
const [file, minMs = "60"] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stack = (id) => { const s = []; for (let x = id; x !== undefined; x = parent.get(x)) s.push(byId.get(x)); return s; };
const label = (n) => `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*\/(src|node_modules)\//, "$1/")}:${n.callFrame.lineNumber + 1}`;
let t = p.startTime; const runs = []; let cur = null;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i];
  const n = byId.get(p.samples[i]);
  const idle = n.callFrame.functionName === "(idle)" || n.callFrame.functionName === "(program)";
  if (!idle) { if (!cur) cur = { start: t, end: t, samples: [] }; cur.end = t; cur.samples.push([p.samples[i], p.timeDeltas[i]]); }
  else if (cur) { runs.push(cur); cur = null; }
}
const after = Number(process.argv[4] ?? 0); const long = runs.filter((r) => (r.end - r.start) / 1000 >= Number(minMs) && (r.start - p.startTime) / 1e6 >= after);
console.log(`${runs.length} busy runs, ${long.length} >= ${minMs} ms`);
const agg = new Map(); const aggSelf = new Map();
for (const r of long) {
  const incl = new Map(); const self = new Map();
  for (const [id, dt] of r.samples) {
    const s = stack(id);
    self.set(label(s[0]), (self.get(label(s[0])) ?? 0) + dt);
    for (const l of new Set(s.map(label))) incl.set(l, (incl.get(l) ?? 0) + dt);
  }
  const top = [...incl].filter(([l]) => /src\//.test(l)).sort((a, b) => b[1] - a[1]).slice(0, 6);
  console.log(`\n== stall ${((r.end - r.start) / 1000).toFixed(0)} ms at +${((r.start - p.startTime) / 1e6).toFixed(1)} s`);
  for (const [l, us] of top) console.log(`   incl ${(us / 1000).toFixed(0).padStart(5)} ms  ${l}`);
  for (const [l, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 4)) console.log(`   self ${(us / 1000).toFixed(0).padStart(5)} ms  ${l}`);
  for (const [l, us] of incl) agg.set(l, (agg.get(l) ?? 0) + us);
  for (const [l, us] of self) aggSelf.set(l, (aggSelf.get(l) ?? 0) + us);
}
console.log("\n== over all long stalls, inclusive (src):");
for (const [l, us] of [...agg].filter(([l]) => /src\//.test(l)).sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${l}`);
console.log("\n== self:");
for (const [l, us] of [...aggSelf].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${l}`);

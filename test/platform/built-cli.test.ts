import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VERSION } from "../../src/platform/ops/version.js";

/**
 * Issue 11: production runs the compiled JavaScript (dist/, built by npm install and by npm start when src/ is
 * newer), and the package's bin works from any directory: no tsx, every file the server reads at run time (package
 * version, migrations, built-in symbols, GraphiQL's assets loaded on demand, Swagger UI's) found from dist/.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "dist/launch.js");
const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-bin-"));
let child: ChildProcess | undefined;
let url = "";

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await new Promise((r) => child!.once("exit", r));
  }
  fs.rmSync(elsewhere, { recursive: true, force: true });
});

describe("the built CLI", () => {
  it("answers --version through its shebang, run from another directory", () => {
    const r = spawnSync(BIN, ["--version"], { cwd: elsewhere, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it("serves from another directory: migrations, symbols, GraphiQL and Swagger UI assets are found", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_LOG: "off" };
    for (const name of ["DATABASE_URL", "PATCHBAY_DATA_DIR", "REDIS_URL", "HOST", "PORT"]) delete env[name];
    child = spawn(BIN, ["--port", "0"], {
      cwd: elsewhere,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    url = await new Promise<string>((resolve, reject) => {
      let err = "";
      child!.stderr!.on("data", (d) => {
        err += d;
        const m = /Patchbay on (\S+)/.exec(err);
        if (m) resolve(m[1]);
      });
      child!.once("exit", (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    expect(fs.existsSync(path.join(elsewhere, "data/patchbay.db")), "the default data directory is the working directory's ./data").toBe(true);
    expect((await (await fetch(`${url}/v2/version`)).json()).version).toBe("2.2.59");
    const symbols = (await (await fetch(`${url}/v2/symbols`)).json()) as { builtin: boolean }[];
    expect(symbols.some((s) => s.builtin)).toBe(true);
    const graphiql = await fetch(`${url}/graphql`, { headers: { accept: "text/html" } });
    expect(graphiql.status).toBe(200);
    expect(await graphiql.text()).toContain("Patchbay GraphiQL");
    expect((await fetch(`${url}/docs/api/assets/swagger-ui.css`)).status).toBe(200);
    const gql = await fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ emulationVersion }" }) });
    expect(await gql.json()).toEqual({ data: { emulationVersion: "2.2.59" }, extensions: { cost: { requested: 1, limit: 100_000, listSize: 20 } } });
  });
});

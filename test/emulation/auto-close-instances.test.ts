import { describe, expect, it } from "vitest";
import { notificationSocket } from "../support/gns3-ws.js";
import { REDIS_URL, redisUp, useInstancePair } from "../support/redis.js";
import { call, spawnCliServer, type TestServer } from "../support/server.js";
import { pause } from "../support/wait.js";

const DELAY_MS = 300;

/**
 * Issue 20: auto_close counts the notification listeners of every instance of a deployment. A listener leaving
 * A closed the project on both while another was still connected to B.
 */
describe.skipIf(!redisUp)("auto_close across two instances", () => {
  const pair = useInstancePair({ autoCloseDelayMs: DELAY_MS });
  const ws = (s: Pick<TestServer, "url">, route: string) => notificationSocket(`${s.url.replace(/^http/, "ws")}${route}`);

  it("waits for the last listener of either instance, then every instance's controller stream hears project.closed", async () => {
    const { a, b } = pair;
    const created = await call(a.url, "POST", "/v2/projects", { name: `auto-close-${Date.now()}`, auto_close: true });
    const id: string = created.body.project_id;
    const status = async (s: TestServer) => (await call(s.url, "GET", `/v2/projects/${id}`)).body.status;
    const controllers = [await ws(a, "/v2/notifications/ws"), await ws(b, "/v2/notifications/ws")];
    const [onA, onB] = [await ws(a, `/v2/projects/${id}/notifications/ws`), await ws(b, `/v2/projects/${id}/notifications/ws`)];
    try {
      await Promise.all([onA.next("ping"), onB.next("ping")]); // both attached

      onA.close();
      await pause(DELAY_MS * 4); // a close would have come by now
      expect([await status(a), await status(b)]).toEqual(["opened", "opened"]);

      onB.close();
      const left = Date.now();
      for (const c of controllers) await c.next("project.closed", (e) => e.project_id === id, DELAY_MS + 5000);
      expect(Date.now() - left).toBeGreaterThanOrEqual(DELAY_MS - 50);
      expect([await status(a), await status(b)]).toEqual(["closed", "closed"]);
      // Closed once, by one of the two instances.
      expect((await controllers[1].rest()).filter((action) => action === "project.closed")).toEqual([]);
    } finally {
      for (const c of [...controllers, onA, onB]) c.close();
    }
  }, 20_000);

  it("counts the delay from the latest leaving: a listener that came and went on B during A's delay postpones the close", async () => {
    const { a, b } = pair;
    const id: string = (await call(a.url, "POST", "/v2/projects", { name: `auto-close-late-${Date.now()}`, auto_close: true })).body.project_id;
    const controller = await ws(b, "/v2/notifications/ws");
    try {
      const onA = await ws(a, `/v2/projects/${id}/notifications/ws`);
      await onA.next("ping");
      onA.close();
      await pause(DELAY_MS / 4);
      const onB = await ws(b, `/v2/projects/${id}/notifications/ws`);
      await onB.next("ping");
      await pause(DELAY_MS / 4);
      onB.close();
      const left = Date.now();
      await controller.next("project.closed", (e) => e.project_id === id, DELAY_MS + 5000);
      expect(Date.now() - left).toBeGreaterThanOrEqual(DELAY_MS - 50);
    } finally {
      controller.close();
    }
  }, 20_000);

  it("a killed instance's listener holds the project open only until its presence lapses (10 s)", async () => {
    const { a } = pair;
    const env = { DATABASE_URL: a.databaseUrl, REDIS_URL, PATCHBAY_AUTO_CLOSE_DELAY: String(DELAY_MS) };
    const killed = await spawnCliServer(env);
    const id: string = (await call(a.url, "POST", "/v2/projects", { name: `auto-close-killed-${Date.now()}`, auto_close: true })).body.project_id;
    const controller = await ws(a, "/v2/notifications/ws");
    try {
      const [onA, onKilled] = [await ws(a, `/v2/projects/${id}/notifications/ws`), await ws(killed, `/v2/projects/${id}/notifications/ws`)];
      await Promise.all([onA.next("ping"), onKilled.next("ping")]);
      killed.child.kill("SIGKILL");
      onA.close();
      await pause(DELAY_MS * 4);
      expect((await call(a.url, "GET", `/v2/projects/${id}`)).body.status).toBe("opened");
      await controller.next("project.closed", (e) => e.project_id === id, 10_000 + DELAY_MS + 2_000);
    } finally {
      controller.close();
      await killed.drop();
    }
  }, 60_000);
});

import { randomUUID } from "node:crypto";
import type { TestServer } from "../support/server.js";

/** A project row straight in the database (the projects API is another module's; these tests need only a row). */
export async function makeProject(s: TestServer, fields: { status?: string; autoClose?: boolean } = {}): Promise<string> {
  const id = randomUUID();
  await s.ctx.db.project.create({ data: { id, name: `p-${id.slice(0, 8)}`, filename: `p-${id.slice(0, 8)}.gns3`, autoClose: false, ...fields } });
  return id;
}

export async function makeNode(s: TestServer, projectId: string, body: Record<string, unknown>) {
  const res = await fetch(`${s.url}/v2/projects/${projectId}/nodes`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ compute_id: "local", ...body }),
  });
  if (res.status !== 201) throw new Error(`node creation failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { node_id: string; name: string; [k: string]: any };
}

/** A GNS3 HTTP notification stream read line by line. */
export function ndjsonStream(url: string) {
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  const controller = new AbortController();
  const ready = fetch(url, { signal: controller.signal }).then(async (res) => {
    void (async () => {
      const decoder = new TextDecoder();
      let buf = "";
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          let i;
          while ((i = buf.indexOf("\n")) >= 0) {
            lines.push(buf.slice(0, i));
            buf = buf.slice(i + 1);
            waiters.splice(0).forEach((w) => w());
          }
        }
      } catch {}
    })();
    return res;
  });
  return {
    ready,
    lines,
    /** Resolves with the first `n` lines (waiting up to `ms`). */
    async take(n: number, ms = 3000): Promise<string[]> {
      const deadline = Date.now() + ms;
      while (lines.length < n) {
        if (Date.now() > deadline) throw new Error(`timeout: ${lines.length}/${n} lines: ${lines.join("\n")}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
      return lines.slice(0, n);
    },
    close: () => controller.abort(),
  };
}

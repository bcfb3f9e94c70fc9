import { randomUUID } from "node:crypto";
import type { TestServer } from "../support/server.js";

/** A project row straight in the database (the projects API is another module's; these tests need only a row). */
export async function makeProject(s: TestServer, fields: { status?: string; autoClose?: boolean } = {}): Promise<string> {
  const id = randomUUID();
  await s.ctx.db.project.create({ data: { id, name: `p-${id.slice(0, 8)}`, filename: `p-${id.slice(0, 8)}.gns3`, autoClose: false, ...fields } });
  return id;
}

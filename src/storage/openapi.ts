import type { ApiFace, RouteDoc } from "../platform/http/openapi.js";
import * as qtrees from "./qtrees/rest.js";
import * as rules from "./quota-rules/rest.js";
import * as svms from "./svms/rest.js";
import * as volumes from "./volumes/rest.js";
import type { WireForm } from "./ontap/wire.js";

/** The bodies of the write routes: the WireForms the routes read them with (the test requires one per write). */
const BODIES: Record<string, WireForm> = {
  "POST /api/svm/svms": svms.POST_BODY,
  "POST /api/storage/volumes": volumes.POST_BODY,
  "PATCH /api/storage/volumes/:uuid": volumes.PATCH_BODY,
  "POST /api/storage/qtrees": qtrees.POST_BODY,
  "PATCH /api/storage/qtrees/:volume/:id": qtrees.PATCH_BODY,
  "POST /api/storage/quota/rules": rules.POST_BODY,
  "PATCH /api/storage/quota/rules/:uuid": rules.PATCH_BODY,
};

const q = (name: string, description: string) => ({ name, description });
const COLLECTION = [
  q("fields", "Fields to return, comma-separated (`*` for all)"),
  q("max_records", "Records per page (1–10000); follow `_links.next.href` for the next page"),
  q("order_by", "`<field> [asc|desc]`, comma-separated"),
  q("return_records", "false: only the count"),
  q("return_timeout", "Seconds to wait (0–120)"),
];
const WRITE = [q("return_timeout", "Seconds to wait for the job (0–120); 0 answers 202 with the job at once"), q("return_records", "true: the created or changed records in the answer")];

/** The ONTAP face (/api): collection GETs also take any filterable field as a query parameter (`name=vol*`). */
export const ontapFace: ApiFace = {
  id: "ontap",
  title: "Patchbay ONTAP REST API",
  description:
    "The ONTAP REST API subset Patchbay serves: SVMs, volumes, qtrees, quota rules and reports, jobs. Collection GETs " +
    "accept ONTAP's filter language on any field they return (`files.hard_limit=>5|null`, `name=qt*`, `!`, `|`).",
  prefix: "/api",
  tagDepth: 3,
  errorSchema: {
    type: "object",
    properties: { error: { type: "object", properties: { message: { type: "string" }, code: { type: "string" }, target: { type: "string" } }, required: ["message", "code"] } },
  },
  routes(): RouteDoc[] {
    const docs: RouteDoc[] = Object.entries(BODIES).map(([key, form]) => {
      const [method, path] = key.split(" ");
      return { method, path, body: form.jsonSchema(), query: WRITE };
    });
    for (const path of ["/api/svm/svms", "/api/storage/volumes", "/api/storage/qtrees", "/api/storage/quota/rules", "/api/storage/quota/reports"]) {
      docs.push({ method: "GET", path, query: COLLECTION });
    }
    return docs;
  },
};

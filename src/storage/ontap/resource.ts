import type { Request, Response, Router } from "express";
import { invalid, unexpected } from "./body.js";
import { envelope, readPage, type CollectionSource } from "./collection.js";
import { parseFields, project } from "./fields.js";
import { buildWhere, type FilterField } from "./filter.js";
import { parseCollectionQuery, single } from "./query.js";
import { halBytes, halVariant, handle, sendHal, sendHalBytes } from "./respond.js";

/** What a collection resource declares; `list` and `getOne` do the rest the same way for every resource. */
export interface ResourceSpec<Row> {
  filterable: Record<string, FilterField>;
  sortable: Set<string>;
  /** Fields of the default collection view (besides keys and _links). */
  defaults: string[];
  /** Always returned (clients read them even when they did not ask). */
  keys: string[];
  source: CollectionSource<Row>;
  records: (rows: Row[]) => Promise<Record<string, unknown>[]>;
  /** Keeps collection answers (by request URL and variant) until the data changes; see ReadViews. */
  cache?: (key: string, build: () => Promise<Buffer>) => Promise<Buffer>;
}

export async function list<Row>(req: Request, res: Response, spec: ResourceSpec<Row>): Promise<void> {
  const render = async () => {
    const q = parseCollectionQuery(req.query as Record<string, unknown>, spec.filterable, spec.sortable);
    const where = await buildWhere(q.filters, spec.filterable);
    const page = await readPage(spec.source, q, where, req.originalUrl);
    // Filtered fields are echoed in the records, as ONTAP does.
    const sel = parseFields(q.fields, spec.defaults, Object.keys(q.filters));
    const records = (await spec.records(page.rows)).map((r) => project(r, sel, spec.keys));
    return halBytes(req, envelope(records, page, req.originalUrl));
  };
  sendHalBytes(req, res, 200, spec.cache ? await spec.cache(`${halVariant(req)} ${req.originalUrl}`, render) : await render());
}

/** GET of one object: all fields unless `fields=` narrows them; only `fields` is accepted as a parameter. */
export async function getOne<Row>(req: Request, res: Response, spec: Pick<ResourceSpec<Row>, "keys" | "records">, row: Row) {
  for (const name of Object.keys(req.query)) if (name !== "fields") throw unexpected(name);
  const fields = single(req.query as Record<string, unknown>, "fields");
  if (fields !== undefined && !fields.split(",").some((f) => f.trim())) throw invalid("fields", "a list of field names");
  const [record] = await spec.records([row]);
  sendHal(req, res, 200, fields === undefined ? record : project(record, parseFields(fields, []), spec.keys));
}

/** GET of the collection and of one object (`itemPath` holds the key parameters). */
export function mountReads<Row>(
  router: Router,
  path: string,
  itemPath: string,
  spec: ResourceSpec<Row>,
  fetchOne: (params: Record<string, string>) => Promise<Row>,
): void {
  router.get(path, handle((req, res) => list(req, res, spec)));
  router.get(`${path}${itemPath}`, handle(async (req, res) => getOne(req, res, spec, await fetchOne(req.params as Record<string, string>))));
}

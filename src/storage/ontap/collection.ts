import type { CollectionQuery } from "./query.js";

/**
 * Runs a collection GET in the database: filter (`where`), order, and a page of `max_records`.
 * Default order is the key, paged by keyset (`start.uuid`); an explicit `order_by` pages by offset
 * (`start.offset`). Either way the next link is the request as sent with the cursor replaced.
 */
export interface CollectionSource<Row> {
  keyColumn: string;
  /** Prisma orderBy for a sortable field name. */
  orderFor: (field: string, dir: "asc" | "desc") => object;
  findMany: (args: { where: object; orderBy: object[]; take?: number; skip?: number }) => Promise<Row[]>;
  count: (args: { where: object }) => Promise<number>;
  keyOf: (row: Row) => string;
}

/** A page's order: the sort keys asked for, then the key, so that rows with equal values page stably. */
export function pageOrder(source: Pick<CollectionSource<unknown>, "orderFor" | "keyColumn">, keys: CollectionQuery["orderBy"]): object[] {
  return [...keys.map((o) => source.orderFor(o.field, o.dir)), { [source.keyColumn]: "asc" }];
}

export interface Page<Row> {
  rows: Row[];
  /** Set when return_records=false: the number of matching records. */
  count?: number;
  nextHref?: string;
}

export async function readPage<Row>(source: CollectionSource<Row>, q: CollectionQuery, where: object, originalUrl: string): Promise<Page<Row>> {
  if (!q.returnRecords) return { rows: [], count: await source.count({ where }) };
  const keyed = q.orderBy.length === 0;
  const orderBy = pageOrder(source, q.orderBy);
  let pageWhere = where;
  let skip: number | undefined;
  if (q.startAfter !== undefined) {
    if (keyed) pageWhere = { AND: [where, { [source.keyColumn]: { gt: q.startAfter } }] };
    else skip = /^\d+$/.test(q.startAfter) ? Number(q.startAfter) : 0;
  }
  const take = q.maxRecords === undefined ? undefined : q.maxRecords + 1;
  const found = await source.findMany({ where: pageWhere, orderBy, take, skip });
  const more = q.maxRecords !== undefined && found.length > q.maxRecords;
  const rows = more ? found.slice(0, q.maxRecords) : found;
  if (!more) return { rows };
  const cursor = keyed ? ["start.uuid", source.keyOf(rows.at(-1)!)] : ["start.offset", String((skip ?? 0) + rows.length)];
  return { rows, nextHref: withParam(originalUrl, cursor[0], cursor[1]) };
}

function withParam(originalUrl: string, name: string, value: string): string {
  const [path, query = ""] = originalUrl.split("?");
  const kept = query.split("&").filter((p) => p && !/^start\.(uuid|offset)=/.test(p));
  kept.push(`${name}=${encodeURIComponent(value)}`);
  return `${path}?${kept.join("&")}`;
}

export function envelope(records: object[], page: Page<unknown>, selfHref: string) {
  if (page.count !== undefined) return { num_records: page.count, _links: { self: { href: selfHref } } };
  return {
    records,
    num_records: records.length,
    _links: { self: { href: selfHref }, ...(page.nextHref ? { next: { href: page.nextHref } } : {}) },
  };
}

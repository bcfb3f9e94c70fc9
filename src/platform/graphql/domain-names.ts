/**
 * GraphQL names carry their value's unit (`rotationDegrees`, `widthPixels`, `zoomPercent`); the domain's names, like
 * the REST wire's, do not. The fields of a GraphQL input object under their domain names: each field `names` lists is
 * renamed, the others pass as they are, and an omitted field stays omitted.
 */
export const withDomainNames = (input: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(input).map(([field, value]) => [names[field] ?? field, value]));

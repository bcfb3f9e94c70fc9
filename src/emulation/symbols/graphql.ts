import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { defaultSymbols, listSymbols, symbolDimensions, type SymbolEntry } from "./operations.js";

const SymbolSize = builder.objectRef<{ width: number; height: number }>("SymbolSize").implement({
  fields: (t) => ({ width: t.exposeInt("width"), height: t.exposeInt("height") }),
});

export const NodeSymbol = builder.objectRef<SymbolEntry>("NodeSymbol").implement({
  description: "A drawing for nodes on the topology; its file is served at /v2/symbols/{id}/raw",
  fields: (t) => ({
    id: t.exposeString("symbol_id"),
    filename: t.exposeString("filename"),
    theme: t.exposeString("theme"),
    builtin: t.exposeBoolean("builtin"),
    size: t.field({
      type: SymbolSize,
      nullable: true,
      description: "Null when the image format does not tell",
      resolve: (s, _a, ctx) => symbolDimensions(ctx, s.symbol_id).catch(() => null),
    }),
  }),
});

const DefaultSymbol = builder.objectRef<{ theme: string; role: string; symbolId: string }>("DefaultSymbol").implement({
  description: "The symbol a theme gives to a kind of node (router, ethernet_switch, computer …)",
  fields: (t) => ({ theme: t.exposeString("theme"), role: t.exposeString("role"), symbolId: t.exposeString("symbolId") }),
});

builder.queryFields((t) => ({
  symbols: t.connection(
    {
      type: NodeSymbol,
      description: "Built-in and custom symbols, by theme",
      args: { theme: t.arg.string({ required: false, description: "Only this theme's (\"Classic\", \"Custom symbols\" …)" }) },
      resolve: (_r, args, ctx) => arrayPage(args, listSymbols(ctx).filter((s) => args.theme == null || s.theme === args.theme)),
    },
    arrayConnectionOptions,
  ),
  defaultSymbols: t.field({
    type: [DefaultSymbol],
    resolve: () =>
      Object.entries(defaultSymbols()).flatMap(([theme, roles]) => Object.entries(roles).map(([role, symbolId]) => ({ theme, role, symbolId }))),
  }),
}));

builder.queryField("symbolDimensions", (t) =>
  t.field({
    type: SymbolSize,
    description: "A symbol's image size, by id (built-in or custom)",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => symbolDimensions(ctx, args.id),
  }),
);

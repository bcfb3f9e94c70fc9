import { ConflictError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { defaultSymbols, listSymbols, symbolDimensions, type SymbolEntry } from "./operations.js";

const SymbolSize = builder.objectRef<{ width: number; height: number }>("SymbolSize").implement({
  description: "The size of a symbol's image",
  fields: (t) => ({
    widthPixels: t.exposeInt("width", { description: "Width, in pixels" }),
    heightPixels: t.exposeInt("height", { description: "Height, in pixels" }),
  }),
});

export const NodeSymbol = builder.objectRef<SymbolEntry>("NodeSymbol").implement({
  description: "An icon nodes are drawn with on a lab's canvas; `rawUrl` downloads its image",
  fields: (t) => ({
    symbolId: t.exposeID("symbol_id", { description: "The symbol's id, what a node's `symbol` names (:/symbols/classic/router.svg, or a custom file name)" }),
    filename: t.exposeString("filename", { description: "The image's file name" }),
    theme: t.exposeString("theme", { description: "The set it belongs to (\"Classic\", \"Affinity-square-blue\" …, or \"Custom symbols\")" }),
    builtin: t.exposeBoolean("builtin", { description: "Whether it ships with the server (else it was uploaded)" }),
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
  fields: (t) => ({
    theme: t.exposeString("theme", { description: "The symbol theme" }),
    role: t.exposeString("role", { description: "The kind of node (router, ethernet_switch, computer …)" }),
    symbolId: t.exposeString("symbolId", { description: "The symbol the theme gives it" }),
  }),
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
    description: "The symbol each theme gives to each kind of node",
    resolve: () =>
      Object.entries(defaultSymbols()).flatMap(([theme, roles]) => Object.entries(roles).map(([role, symbolId]) => ({ theme, role, symbolId }))),
  }),
}));

builder.queryField("symbolDimensions", (t) =>
  t.field({
    type: SymbolSize,
    description: "A symbol's image size, by id (built-in or custom)",
    errors: { types: [ConflictError] },
    args: { id: t.arg.id({ required: true, description: "The symbol's id (a NodeSymbol's `symbolId`)" }) },
    resolve: (_r, args, ctx) => symbolDimensions(ctx, args.id),
  }),
);

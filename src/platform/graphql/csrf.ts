import { createGraphQLError, type Plugin } from "graphql-yoga";

/**
 * Cross-site request forgery: a browser sends a form's POST (urlencoded, multipart, text/plain) to any site
 * without asking first, with the Basic credentials it holds for that site. Yoga executes operations from
 * urlencoded and multipart bodies (uploads), so such a POST must carry a header no form can set; a page of
 * another site that adds one makes the browser ask first (CORS preflight), which fails without credentials.
 * The names are those GraphQL upload clients send (Apollo, Yoga, the multipart convention's discussion).
 */
const PREFLIGHT_HEADERS = [
  "graphql-preflight",
  "graphql-require-preflight",
  "apollo-require-preflight",
  "x-apollo-operation-name",
  "x-graphql-yoga-csrf",
];
const FORM_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"];

export function useCsrfPrevention(): Plugin {
  return {
    onRequestParse({ request }) {
      if (request.method !== "POST") return; // GET never runs a mutation
      const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (type && !FORM_TYPES.includes(type)) return;
      if (PREFLIGHT_HEADERS.some((h) => request.headers.get(h))) return;
      throw createGraphQLError(`A ${type || "form"} POST needs a non-empty header a form cannot send: ${PREFLIGHT_HEADERS.join(", ")}`, {
        extensions: { http: { status: 403 }, code: "CSRF_PREVENTED" },
      });
    },
  };
}

/**
 * The rules a drawing's SVG must follow. Drawings are rendered by every client of the project (the desktop GUI's
 * Qt SVG renderer, web UIs that put the SVG into a page), so what one user stores must not run code in, or make
 * requests from, another user's client. A whitelist, checked by a small single-pass XML tokenizer (no
 * backtracking over client text: each check is linear in the document's length):
 * - at most SVG_MAX_LENGTH characters; one root element `<svg>`, tags balanced, attributes quoted, only the
 *   five XML entities and character references (no DTD internal subset, hence no entity expansion);
 * - no scripting: no script/foreignObject/iframe/embed/object/handler/listener elements, no on* attributes,
 *   no animation of href, no `javascript:` anywhere;
 * - no external references: href/src only `#fragment` or `data:image/...`, `url()` only `#fragment` or
 *   `data:image/...`, no CSS `@import` nor CSS escapes (which could spell either), no processing
 *   instructions other than the XML declaration (xml-stylesheet would load a sheet);
 * - no comment that an HTML parser reads differently from an XML one (`<!-->`, `<!--->`, `--!>` end it early
 *   for HTML, so markup "inside" would be live in a web page): XML's own rule, no `--` inside a comment.
 * What the GNS3 GUI produces (note, rectangle, ellipse, line, embedded picture) passes unchanged.
 */
export const SVG_MAX_LENGTH = 512 * 1024;

export class SvgRejected extends Error {}

const FORBIDDEN_ELEMENTS = new Set(["script", "foreignobject", "iframe", "embed", "object", "handler", "listener"]);
const ANIMATIONS = new Set(["animate", "set"]);
const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

// Sticky patterns, tried at one position each; none can backtrack beyond the token it reads.
const NAME = "[A-Za-z_][\\w.:-]*";
const ATTRIBUTE = new RegExp(`\\s+(${NAME})\\s*=\\s*("[^"<]*"|'[^'<]*')`, "y");
const OPEN_TAG = new RegExp(`<(${NAME})`, "y");
const CLOSE_TAG = new RegExp(`</(${NAME})\\s*>`, "y");
const TAG_END = /\s*(\/?)>/y;
const DECLARATION = /\uFEFF?<\?xml\s[^?]*\?>/y; // the XML declaration, only at the very start
const ENTITY = /&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);|&/g;

const localName = (name: string) => name.slice(name.indexOf(":") + 1).toLowerCase();

/** Replaces entity references; an unknown entity or a bare `&` makes the document not well-formed. */
function decode(text: string): string {
  return text.replace(ENTITY, (whole, ref: string | undefined) => {
    if (!ref) throw new SvgRejected("a bare '&' must be written &amp;");
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!(code > 0 && code <= 0x10ffff)) throw new SvgRejected(`invalid character reference ${whole}`);
      return String.fromCodePoint(code);
    }
    if (!(ref in PREDEFINED)) throw new SvgRejected(`unknown entity ${whole}`);
    return PREDEFINED[ref];
  });
}

type Token =
  | { kind: "open"; name: string; attributes: [name: string, value: string][]; selfClosing: boolean }
  | { kind: "close"; name: string }
  | { kind: "text"; raw: string }
  | { kind: "cdata"; data: string }
  | { kind: "comment" }
  | { kind: "doctype" };

/** The document's tokens, read lazily in one pass; malformed or ambiguous syntax throws SvgRejected. */
function* tokens(svg: string): Generator<Token> {
  let at = 0;
  const expectAt = (re: RegExp) => {
    re.lastIndex = at;
    const m = re.exec(svg);
    if (m) at = re.lastIndex;
    return m;
  };
  const skipTo = (end: string, what: string) => {
    const i = svg.indexOf(end, at);
    if (i < 0) throw new SvgRejected(`unterminated ${what}`);
    const body = svg.slice(at, i);
    at = i + end.length;
    return body;
  };

  expectAt(DECLARATION);
  while (at < svg.length) {
    const lt = svg.indexOf("<", at);
    if (lt !== at) yield { kind: "text", raw: svg.slice(at, lt < 0 ? svg.length : lt) };
    if (lt < 0) return;
    at = lt;
    if (svg.startsWith("<!--", at)) {
      at += 4;
      const body = skipTo("-->", "comment");
      if (body.startsWith(">") || body.startsWith("->") || body.includes("--") || body.endsWith("-")) {
        throw new SvgRejected("a comment may not contain '--' nor begin with '>' or '->' (an HTML parser ends it early at <!-->, <!---> or --!>)");
      }
      yield { kind: "comment" };
    } else if (svg.startsWith("<![CDATA[", at)) {
      at += 9;
      yield { kind: "cdata", data: skipTo("]]>", "CDATA section") };
    } else if (svg.startsWith("<?", at)) {
      throw new SvgRejected("processing instructions are not allowed");
    } else if (svg.startsWith("<!DOCTYPE", at)) {
      if (skipTo(">", "DOCTYPE").includes("[")) throw new SvgRejected("a DOCTYPE internal subset (entity declarations) is not allowed");
      yield { kind: "doctype" };
    } else if (svg.startsWith("</", at)) {
      const m = expectAt(CLOSE_TAG);
      if (!m) throw new SvgRejected("malformed closing tag");
      yield { kind: "close", name: m[1] };
    } else {
      const m = expectAt(OPEN_TAG);
      if (!m) throw new SvgRejected("malformed tag");
      const attributes: [string, string][] = [];
      for (let a = expectAt(ATTRIBUTE); a; a = expectAt(ATTRIBUTE)) attributes.push([a[1], decode(a[2].slice(1, -1))]);
      const end = expectAt(TAG_END);
      if (!end) throw new SvgRejected(`malformed attributes in <${m[1]}>`);
      yield { kind: "open", name: m[1], attributes, selfClosing: end[1] === "/" };
    }
  }
}

/** URLs as a browser reads them: ASCII whitespace and control characters inside are ignored. */
const squeeze = (url: string) => url.replace(/[\u0000-\u0020]/g, "").toLowerCase();
const localUrl = (url: string) => {
  const u = squeeze(url);
  return u === "" || u.startsWith("#") || u.startsWith("data:image/");
};

const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";

/** The position after `<word>(` at `i` of lower-cased CSS (spaces allowed before the bracket), or -1. */
function callAt(css: string, i: number, word: string): number {
  let j = i + word.length;
  while (isSpace(css[j])) j++;
  return css[j] === "(" ? j + 1 : -1;
}

/** The argument of `url(` starting at `from` (a quoted string up to its quote, else up to `)`) and where it ends. */
function urlArgument(css: string, from: number): { url: string; end: number } {
  let i = from;
  while (isSpace(css[i])) i++;
  const quote = css[i] === '"' || css[i] === "'" ? css[i] : undefined;
  const start = quote ? i + 1 : i;
  const close = css.indexOf(quote ?? ")", start);
  const end = close < 0 ? css.length : close;
  return { url: css.slice(start, end), end };
}

/** One pass each: every search resumes after what the previous one read (a `url(` argument is read once). */
function checkCss(css: string, where: string): void {
  if (css.includes("\\")) throw new SvgRejected(`CSS escapes are not allowed in ${where}`);
  const lower = css.toLowerCase();
  if (lower.includes("@import")) throw new SvgRejected(`@import is not allowed in ${where}`);
  for (let i = lower.indexOf("url"); i >= 0; i = lower.indexOf("url", i)) {
    const from = callAt(lower, i, "url");
    if (from < 0) {
      i += 3;
      continue;
    }
    const { url, end } = urlArgument(css, from);
    if (!localUrl(url)) throw new SvgRejected(`external reference url(${url.slice(0, 200)}) is not allowed in ${where}`);
    i = end;
  }
  for (let i = lower.indexOf("expression"); i >= 0; i = lower.indexOf("expression", i + 10)) {
    if (callAt(lower, i, "expression") >= 0) throw new SvgRejected(`expression() is not allowed in ${where}`);
  }
}

function checkAttribute(element: string, name: string, value: string): void {
  const local = localName(name);
  if (local.startsWith("on")) throw new SvgRejected(`event handler attribute ${name} is not allowed`);
  const url = squeeze(value);
  if (url.includes("javascript:") || url.includes("vbscript:")) throw new SvgRejected(`script URL in attribute ${name} is not allowed`);
  if ((local === "href" || local === "src") && !localUrl(value)) {
    throw new SvgRejected(`external reference ${name}="${value.slice(0, 200)}" is not allowed (only #fragment or data:image/...)`);
  }
  if (ANIMATIONS.has(element) && local === "attributename" && localName(value.trim()) === "href") {
    throw new SvgRejected("animating href is not allowed");
  }
  checkCss(value, `attribute ${name}`);
}

/** Throws SvgRejected with the reason when `svg` breaks the rules above. */
export function checkSvg(svg: string): void {
  if (svg.length > SVG_MAX_LENGTH) throw new SvgRejected(`it is longer than ${SVG_MAX_LENGTH} characters`);
  const open: string[] = [];
  let seenRoot = false;
  for (const token of tokens(svg)) {
    if (token.kind === "text") {
      if (!token.raw.trim()) continue;
      if (!open.length) throw new SvgRejected("text outside the <svg> element");
      const decoded = decode(token.raw);
      if (open.at(-1) === "style") checkCss(decoded, "<style>");
    } else if (token.kind === "cdata") {
      if (!open.length) throw new SvgRejected("CDATA outside the <svg> element");
      if (open.at(-1) === "style") checkCss(token.data, "<style>");
    } else if (token.kind === "doctype") {
      if (seenRoot) throw new SvgRejected("DOCTYPE inside the document");
    } else if (token.kind === "close") {
      const expected = open.pop();
      if (expected !== localName(token.name)) throw new SvgRejected(`</${token.name}> does not close <${expected ?? "nothing"}>`);
    } else if (token.kind === "open") {
      const element = localName(token.name);
      if (!open.length && (seenRoot || element !== "svg")) throw new SvgRejected("the document must be one <svg> element");
      seenRoot = true;
      if (FORBIDDEN_ELEMENTS.has(element)) throw new SvgRejected(`<${token.name}> elements are not allowed`);
      const seen = new Set<string>();
      for (const [name, value] of token.attributes) {
        if (seen.has(localName(name))) throw new SvgRejected(`attribute ${name} repeated`);
        seen.add(localName(name));
        checkAttribute(element, name, value);
      }
      if (!token.selfClosing) open.push(element);
    }
  }
  if (!seenRoot) throw new SvgRejected("the document must be one <svg> element");
  if (open.length) throw new SvgRejected(`<${open.at(-1)}> is not closed`);
}

export type DrawingShape = "note" | "rectangle" | "ellipse" | "line" | "image";

const SHAPES: Record<string, DrawingShape> = { text: "note", rect: "rectangle", ellipse: "ellipse", line: "line" };

/**
 * How the GNS3 GUI draws it: a root without a default namespace whose first child (only whitespace before it)
 * is <text>, <rect>, <ellipse> or <line> without children of its own is that tool; anything else is an image.
 * Reads only the first few tokens.
 */
export function drawingShape(svg: string): DrawingShape {
  try {
    const read = tokens(svg);
    const next = () => {
      for (let t = read.next(); !t.done; t = read.next()) if (t.value.kind !== "text" || t.value.raw.trim()) return t.value;
      return undefined;
    };
    let root = next();
    while (root && root.kind !== "open") root = root.kind === "comment" || root.kind === "doctype" ? next() : undefined;
    if (root?.name !== "svg" || root.selfClosing || root.attributes.some(([name]) => name === "xmlns")) return "image";
    const child = next();
    if (child?.kind !== "open" || !Object.hasOwn(SHAPES, child.name)) return "image";
    if (child.selfClosing) return SHAPES[child.name];
    let end = read.next();
    while (!end.done && end.value.kind === "text") end = read.next(); // the note's own text
    return !end.done && end.value.kind === "close" && end.value.name === child.name ? SHAPES[child.name] : "image";
  } catch (e) {
    if (e instanceof SvgRejected) return "image";
    throw e;
  }
}

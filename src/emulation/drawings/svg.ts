/**
 * The rules a drawing's SVG must follow. Drawings are rendered by every client of the project (the desktop GUI's
 * Qt SVG renderer, web UIs that put the SVG into a page), so what one user stores must not run code in, or make
 * requests from, another user's client. A whitelist, checked by a small XML tokenizer:
 * - at most SVG_MAX_LENGTH characters; one root element `<svg>`, tags balanced, attributes quoted, only the
 *   five XML entities and character references (no DTD internal subset, hence no entity expansion);
 * - no scripting: no script/foreignObject/iframe/embed/object/handler/listener elements, no on* attributes,
 *   no animation of href, no `javascript:` anywhere;
 * - no external references: href/src only `#fragment` or `data:image/...`, `url()` only `#fragment` or
 *   `data:image/...`, no CSS `@import` nor CSS escapes (which could spell either), no processing
 *   instructions other than the XML declaration (xml-stylesheet would load a sheet).
 * What the GNS3 GUI produces (note, rectangle, ellipse, line, embedded picture) passes unchanged.
 */
export const SVG_MAX_LENGTH = 512 * 1024;

export class SvgRejected extends Error {}

const FORBIDDEN_ELEMENTS = new Set(["script", "foreignobject", "iframe", "embed", "object", "handler", "listener"]);
const ANIMATIONS = new Set(["animate", "set"]);
const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

const NAME = "[A-Za-z_][\\w.:-]*";
const ATTRIBUTE = new RegExp(`\\s+(${NAME})\\s*=\\s*("[^"<]*"|'[^'<]*')`, "y");
const OPEN_TAG = new RegExp(`<(${NAME})`, "y");
const CLOSE_TAG = new RegExp(`</(${NAME})\\s*>`, "y");
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

/** URLs as a browser reads them: ASCII whitespace and control characters inside are ignored. */
const squeeze = (url: string) => url.replace(/[\u0000-\u0020]/g, "").toLowerCase();
const localUrl = (url: string) => {
  const u = squeeze(url);
  return u === "" || u.startsWith("#") || u.startsWith("data:image/");
};

function checkCss(css: string, where: string): void {
  if (css.includes("\\")) throw new SvgRejected(`CSS escapes are not allowed in ${where}`);
  if (/@import/i.test(css)) throw new SvgRejected(`@import is not allowed in ${where}`);
  for (const m of css.matchAll(/url\s*\(\s*(["']?)([^"')]*)\1\s*\)/gi)) {
    if (!localUrl(m[2])) throw new SvgRejected(`external reference url(${m[2]}) is not allowed in ${where}`);
  }
  if (/expression\s*\(/i.test(css)) throw new SvgRejected(`expression() is not allowed in ${where}`);
}

function checkAttribute(element: string, name: string, value: string, attrs: Map<string, string>): void {
  const local = localName(name);
  if (local.startsWith("on")) throw new SvgRejected(`event handler attribute ${name} is not allowed`);
  if (/(java|vb)script:/.test(squeeze(value))) throw new SvgRejected(`script URL in attribute ${name} is not allowed`);
  if ((local === "href" || local === "src") && !localUrl(value)) {
    throw new SvgRejected(`external reference ${name}="${value}" is not allowed (only #fragment or data:image/...)`);
  }
  if (ANIMATIONS.has(element) && local === "attributename" && localName(value.trim()) === "href") {
    throw new SvgRejected("animating href is not allowed");
  }
  checkCss(value, `attribute ${name}`);
  attrs.set(local, value);
}

/** Throws SvgRejected with the reason when `svg` breaks the rules above. */
export function checkSvg(svg: string): void {
  if (svg.length > SVG_MAX_LENGTH) throw new SvgRejected(`it is longer than ${SVG_MAX_LENGTH} characters`);
  const open: string[] = [];
  let seenRoot = false;
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

  const declaration = /^\uFEFF?<\?xml\s[^?]*\?>/.exec(svg); // the XML declaration, only at the very start
  if (declaration) at = declaration[0].length;

  while (at < svg.length) {
    const lt = svg.indexOf("<", at);
    const text = svg.slice(at, lt < 0 ? svg.length : lt);
    if (text.trim()) {
      if (!open.length) throw new SvgRejected("text outside the <svg> element");
      const decoded = decode(text);
      if (open.at(-1) === "style") checkCss(decoded, "<style>");
    }
    if (lt < 0) break;
    at = lt;
    if (svg.startsWith("<!--", at)) {
      at += 4;
      skipTo("-->", "comment");
    } else if (svg.startsWith("<![CDATA[", at)) {
      if (!open.length) throw new SvgRejected("CDATA outside the <svg> element");
      at += 9;
      const data = skipTo("]]>", "CDATA section");
      if (open.at(-1) === "style") checkCss(data, "<style>");
    } else if (svg.startsWith("<?", at)) {
      throw new SvgRejected("processing instructions are not allowed");
    } else if (svg.startsWith("<!DOCTYPE", at)) {
      if (seenRoot) throw new SvgRejected("DOCTYPE inside the document");
      const decl = skipTo(">", "DOCTYPE");
      if (decl.includes("[")) throw new SvgRejected("a DOCTYPE internal subset (entity declarations) is not allowed");
    } else if (svg.startsWith("</", at)) {
      const m = expectAt(CLOSE_TAG);
      if (!m) throw new SvgRejected("malformed closing tag");
      const expected = open.pop();
      if (expected !== localName(m[1])) throw new SvgRejected(`</${m[1]}> does not close <${expected ?? "nothing"}>`);
    } else {
      const m = expectAt(OPEN_TAG);
      if (!m) throw new SvgRejected("malformed tag");
      const element = localName(m[1]);
      if (!open.length && (seenRoot || element !== "svg")) throw new SvgRejected("the document must be one <svg> element");
      seenRoot = true;
      if (FORBIDDEN_ELEMENTS.has(element)) throw new SvgRejected(`<${m[1]}> elements are not allowed`);
      const attrs = new Map<string, string>();
      for (let a = expectAt(ATTRIBUTE); a; a = expectAt(ATTRIBUTE)) {
        if (attrs.has(localName(a[1]))) throw new SvgRejected(`attribute ${a[1]} repeated`);
        checkAttribute(element, a[1], decode(a[2].slice(1, -1)), attrs);
      }
      const end = expectAt(/\s*(\/?)>/y);
      if (!end) throw new SvgRejected(`malformed attributes in <${m[1]}>`);
      if (!end[1]) open.push(element);
    }
  }
  if (!seenRoot) throw new SvgRejected("the document must be one <svg> element");
  if (open.length) throw new SvgRejected(`<${open.at(-1)}> is not closed`);
}

export type DrawingShape = "note" | "rectangle" | "ellipse" | "line" | "image";

const SHAPES: Record<string, DrawingShape> = { text: "note", rect: "rectangle", ellipse: "ellipse", line: "line" };

/**
 * How the GNS3 GUI draws it: a root without a default namespace whose first child is <text>, <rect>,
 * <ellipse> or <line> without children of its own is that tool; anything else is an image.
 */
export function drawingShape(svg: string): DrawingShape {
  const m = /<svg\b([^>]*)>\s*<([A-Za-z_][\w.:-]*)[^>]*?(\/?)>/.exec(svg);
  if (!m || /\sxmlns\s*=/.test(m[1]) || !Object.hasOwn(SHAPES, m[2])) return "image";
  const leaf = m[3] === "/" || new RegExp(`^[^<]*</${m[2]}\\s*>`).test(svg.slice(m.index + m[0].length));
  return leaf ? SHAPES[m[2]] : "image";
}

import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { domainId } from "../../platform/graphql/global-id.js";
import { openNodeConsole, type ConsoleLink } from "./link.js";
import { FORWARDED_ERRORS } from "../computes/forwarding.js";
import { TelnetText } from "./telnet-text.js";

/**
 * The console in GraphQL: `nodeConsole` (a subscription) opens a console connection of its own, exactly as a
 * client of the console WebSocket does (link.ts), and streams its output; `sendNodeConsoleInput` (a mutation)
 * writes to it by the session id the subscription's first item carries. The session lives on the instance that
 * runs the subscription, so the input goes over the same graphql-ws connection (or to the same instance).
 *
 * Bounded as the other subscriptions: one graphql-ws connection runs at most PATCHBAY_WS_SUBSCRIPTION_LIMIT
 * operations (so consoles) at once; output a subscriber has not read beyond OUTPUT_HIGH_WATER stops the console
 * being read until it catches up (nothing is dropped, nothing grows without bound); an input is at most
 * INPUT_LIMIT bytes, and input the console has not taken beyond INPUT_BACKLOG is refused (ConflictError).
 */
const CHUNK_BYTES = 4096;
const OUTPUT_HIGH_WATER = 256 * 1024;
export const INPUT_LIMIT = 64 * 1024;
const INPUT_BACKLOG = 1024 * 1024;

interface ConsoleChunk {
  session: string;
  bytes: Buffer;
  text: string;
}

interface ConsoleSession {
  link: ConsoleLink;
  nodeName: string;
}

/**
 * The open sessions of each server, found through its configuration: every copy of a server's context shares it
 * (not its bus: a subscription sees the bus through a scope of its own).
 */
const sessionsByServer = new WeakMap<object, Map<string, ConsoleSession>>();
function sessionsOf(ctx: AppContext): Map<string, ConsoleSession> {
  let sessions = sessionsByServer.get(ctx.config);
  if (!sessions) sessionsByServer.set(ctx.config, (sessions = new Map()));
  return sessions;
}

/** The output of one console session as an async iterator; the console is closed when the reader leaves. */
function consoleStream(ctx: AppContext, session: string, link: ConsoleLink, ended?: AbortSignal): AsyncIterableIterator<ConsoleChunk> {
  const queue: ConsoleChunk[] = [{ session, bytes: Buffer.alloc(0), text: "" }]; // the first item: connected
  let queued = 0;
  let paused = false;
  let done = false;
  let wake: (() => void) | undefined;
  const decoder = new TelnetText();
  const finish = () => {
    if (done) return;
    done = true;
    sessionsOf(ctx).delete(session);
    link.close();
    wake?.();
  };
  link.onOutput((chunk) => {
    for (let i = 0; i < chunk.length; i += CHUNK_BYTES) {
      const bytes = chunk.subarray(i, i + CHUNK_BYTES);
      queue.push({ session, bytes, text: decoder.decode(bytes) });
      queued += bytes.length;
    }
    if (!paused && queued > OUTPUT_HIGH_WATER) {
      paused = true;
      link.pause();
    }
    wake?.();
  });
  link.onEnd(finish);
  ended?.addEventListener("abort", finish, { once: true });
  const iterator: AsyncIterableIterator<ConsoleChunk> = {
    async next() {
      while (!queue.length && !done) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      const value = queue.shift();
      if (!value) return { value: undefined, done: true };
      queued -= value.bytes.length;
      if (paused && queued < OUTPUT_HIGH_WATER / 2) {
        paused = false;
        link.resume();
      }
      return { value, done: false };
    },
    async return() {
      finish();
      queue.length = 0;
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

const NodeConsoleOutput = builder.objectRef<ConsoleChunk>("NodeConsoleOutput").implement({
  description:
    "Output of a node's telnet console. The first item of a `nodeConsole` subscription is empty (`data` and `text` \"\"): the " +
    "console is connected and `session` can take input.",
  fields: (t) => ({
    session: t.id({ description: "The console session: pass it to `sendNodeConsoleInput`", resolve: (c) => c.session }),
    data: t.string({ description: "The bytes exactly as the console sent them (raw telnet, negotiation included), base64", resolve: (c) => c.bytes.toString("base64") }),
    text: t.string({
      description: "The same bytes as text: telnet commands removed, UTF-8 decoded (a character split between items is given whole in the later one)",
      resolve: (c) => c.text,
    }),
  }),
});

builder.subscriptionField("nodeConsole", (t) =>
  t.field({
    type: NodeConsoleOutput,
    // A remote node's console is relayed: its compute's refusal is mapped as a forwarded read's.
    errors: { types: FORWARDED_ERRORS },
    description:
      "A node's telnet console: a connection of its own, as a terminal opened on the console would have (relayed " +
      "from its compute when the node runs on another). Ends when the console closes (the node stopped) or the client leaves. " +
      "ConflictError when the console type is not telnet, the node is not started or its console does not answer; NotFoundError " +
      "for an unknown node. Input: `sendNodeConsoleInput` with the `session` of the first item, over the same connection.",
    args: { id: t.arg.id({ required: true, description: "The node whose console to open (its global id, or its GNS3 node_id)" }) },
    subscribe: async (_r, args, ctx) => {
      const nodeId = domainId(args.id, "EmulatedNode", "id");
      const node = await ctx.db.node.findUnique({ where: { id: nodeId } });
      if (!node) throw new NotFoundError(`Node ID ${nodeId} doesn't exist`);
      const link = await openNodeConsole(ctx, node);
      if (ctx.operationEnded?.aborted) {
        link.close();
        throw new ConflictError("The subscription ended before its console connected");
      }
      const session = randomUUID();
      sessionsOf(ctx).set(session, { link, nodeName: node.name });
      return consoleStream(ctx, session, link, ctx.operationEnded);
    },
    resolve: (c) => c,
  }),
);

const SendNodeConsoleInput = builder.inputType("SendNodeConsoleInputInput", {
  description: `What to type into a console session: \`text\` or \`data\`, one of the two, at most ${INPUT_LIMIT} bytes`,
  fields: (t) => ({
    session: t.id({ required: true, description: "The console session, from the first item of `nodeConsole`" }),
    text: t.string({ description: "Text sent as its UTF-8 bytes, e.g. \"show ip\\n\"" }),
    data: t.string({ description: "Base64 of the bytes to send as they are (telnet commands, control keys)" }),
  }),
});

builder.mutationField("sendNodeConsoleInput", (t) =>
  t.field({
    type: payloadType<{ bytesWritten: number }>("sendNodeConsoleInput", "What `sendNodeConsoleInput` wrote", (f) => ({
      bytesWritten: f.exposeInt("bytesWritten", { description: "Bytes written to the console" }),
    })),
    // NOT_FOUND: the session is not open here; CONFLICT: the console has not taken the input already sent.
    errors: mutationErrors("sendNodeConsoleInput", [InvalidInputError, NotFoundError, ConflictError]),
    description:
      "Writes to the console of a `nodeConsole` session. NotFoundError when the session is not open on this server (it " +
      "ended, or its subscription runs on another instance); ConflictError when the console has not taken the input already sent.",
    args: { input: t.arg({ type: SendNodeConsoleInput, required: true, description: "The session and what to send" }) },
    resolve: (_r, { input }, ctx) => {
      if ((input.text == null) === (input.data == null)) throw new InvalidInputError("Give exactly one of text and data");
      if (input.data != null && !/^[A-Za-z0-9+/]*={0,2}$/.test(input.data)) throw new InvalidInputError("data is not base64", { target: "data" });
      const bytes = input.text != null ? Buffer.from(input.text, "utf8") : Buffer.from(input.data!, "base64");
      if (bytes.length > INPUT_LIMIT) throw new InvalidInputError(`A console input is at most ${INPUT_LIMIT} bytes (got ${bytes.length})`, { reason: "too_large" });
      const session = sessionsOf(ctx).get(String(input.session));
      if (!session) throw new NotFoundError(`Console session ${input.session} is not open on this server`);
      if (session.link.pendingInput() > INPUT_BACKLOG) throw new ConflictError(`The console of ${session.nodeName} is not taking its input`);
      session.link.send(bytes, input.text == null);
      return { bytesWritten: bytes.length };
    },
  }),
);

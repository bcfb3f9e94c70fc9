import WebSocket from "ws";

/**
 * A GNS3 notification WebSocket as the GUI reads it: one JSON object {action, event} per text frame (a binary
 * frame fails the test). `next` waits for the next frame, after those already taken, whose action (and event,
 * when `match` is given) matches; frames in between are skipped.
 */
export async function notificationSocket(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const messages: { action: string; event: any }[] = [];
  let binaryFrames = 0;
  ws.on("message", (data, binary) => {
    if (binary) binaryFrames++;
    else messages.push(JSON.parse(String(data)));
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let read = 0;
  return {
    messages,
    async next(action: string | RegExp, match: (event: any) => boolean = () => true, ms = 5000): Promise<{ action: string; event: any }> {
      const deadline = Date.now() + ms;
      for (;;) {
        if (binaryFrames) throw new Error(`${binaryFrames} binary frame(s) on ${url}: GNS3 sends text frames`);
        while (read < messages.length) {
          const m = messages[read++];
          if ((typeof action === "string" ? m.action === action : action.test(m.action)) && match(m.event)) return m;
        }
        if (Date.now() > deadline) throw new Error(`timeout waiting for ${action}; saw ${messages.map((m) => m.action).join(", ")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    /** Actions of the frames not taken yet, after waiting for things to settle. */
    async rest(ms = 200): Promise<string[]> {
      await new Promise((r) => setTimeout(r, ms));
      const out = messages.slice(read).map((m) => m.action);
      read = messages.length;
      return out;
    },
    close: () => ws.close(),
  };
}

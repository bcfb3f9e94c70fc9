/** Helpers for tests that run real labs (vpcs over telnet, captures). */
import net from "node:net";

/** Whether a node's console port on this host accepts a connection (its emulator is up and listening). */
export const consoleAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

/** ICMP echo requests (type 8) and replies (type 0) among Ethernet frames (as read from a pcap). */
export function icmpEchoes(frames: Buffer[]) {
  const out: { type: number; src: string; dst: string }[] = [];
  for (const f of frames) {
    if (f.length < 34 || f.readUInt16BE(12) !== 0x0800 || f[23] !== 1) continue;
    const ip = (o: number) => [...f.subarray(o, o + 4)].join(".");
    out.push({ type: f[14 + (f[14] & 0x0f) * 4], src: ip(26), dst: ip(30) });
  }
  return out;
}

/**
 * Follows a live pcap stream (GET …/links/{id}/pcap, or a signed URL of it): the response, the bytes received
 * so far (`bytes()`), and `stop()`, which leaves the stream and waits until reading has ended.
 */
export async function followPcap(url: string) {
  const abort = new AbortController();
  const response = await fetch(url, { signal: abort.signal });
  const received: Buffer[] = [];
  const reading = (async () => {
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) received.push(Buffer.from(chunk));
    } catch {}
  })();
  return {
    response,
    bytes: () => Buffer.concat(received),
    stop: async () => {
      abort.abort();
      await reading;
    },
  };
}

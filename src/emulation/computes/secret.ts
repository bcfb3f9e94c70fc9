import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * Compute passwords are sealed with AES-256-GCM under a per-instance key kept in <dataDir>/secret.key (mode 0600),
 * so neither the database nor a copy of it reveals them; the compute id is bound in as associated data, so a
 * sealed value cannot be moved to another compute. (GNS3 keeps them in clear in gns3_controller.conf.)
 */
const keys = new Map<string, Buffer>();

function instanceKey(dataDir: string): Buffer {
  const cached = keys.get(dataDir);
  if (cached) return cached;
  const file = path.join(dataDir, "secret.key");
  if (!fs.existsSync(file)) {
    // Written aside then hard-linked: link fails if another process won the race, and nobody reads a half-written key.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
    fs.writeFileSync(tmp, randomBytes(32).toString("base64"), { mode: 0o600 });
    try {
      fs.linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    } finally {
      fs.unlinkSync(tmp);
    }
  }
  const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new Error(`${file} does not hold a 256-bit key`);
  keys.set(dataDir, key);
  return key;
}

export function seal(dataDir: string, plaintext: string, boundTo: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", instanceKey(dataDir), iv).setAAD(Buffer.from(boundTo));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
}

export function unseal(dataDir: string, sealed: string, boundTo: string): string {
  const raw = Buffer.from(sealed.replace(/^v1:/, ""), "base64");
  const decipher = createDecipheriv("aes-256-gcm", instanceKey(dataDir), raw.subarray(0, 12)).setAAD(Buffer.from(boundTo));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

import { createPrivateKey, X509Certificate } from "node:crypto";
import fs from "node:fs";
import { StartupError } from "./startup-errors.js";

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

function read(setting: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new StartupError(`cannot read ${setting} ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)}): fix the path or its permissions`);
  }
}

/**
 * Reads and checks the TLS pair before anything else starts (the database is not migrated for a server that
 * cannot listen): a missing file, a certificate or key that is not one (swapped, encrypted) and a key that does
 * not belong to the certificate are each one line, not an OpenSSL stack trace when the listener opens.
 */
export function loadTlsFiles(tls: { certFile: string; keyFile: string }): TlsMaterial {
  const cert = read("PATCHBAY_TLS_CERT", tls.certFile);
  const key = read("PATCHBAY_TLS_KEY", tls.keyFile);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new StartupError(`PATCHBAY_TLS_CERT ${tls.certFile} holds no PEM certificate (are the certificate and key swapped?)`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new StartupError(`PATCHBAY_TLS_KEY ${tls.keyFile} holds no unencrypted PEM private key (are the certificate and key swapped?)`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new StartupError(`PATCHBAY_TLS_KEY ${tls.keyFile} is not the key of the certificate in PATCHBAY_TLS_CERT ${tls.certFile}`);
  }
  return { cert, key };
}

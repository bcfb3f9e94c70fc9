// The one function of the package Patchbay uses (it ships no types): see data-dir-lock.ts.
declare module "fs-native-extensions" {
  /** An exclusive (or shared) lock on the whole file (length 0), without waiting: false when another holds it. */
  export function tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
}

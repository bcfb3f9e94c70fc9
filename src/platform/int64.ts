/**
 * The 64-bit integers both databases store: the range of every BigInt input (GraphQL, ONTAP bodies and filters),
 * checked and worded in one place so that a too large integer is told the range, not "expected an integer".
 */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const isInt64 = (n: bigint) => n >= INT64_MIN && n <= INT64_MAX;
export const INT64_RANGE = `an integer from ${INT64_MIN} to ${INT64_MAX}`;

/** Decimal text (`-?digits`) as a bigint of any size, for the caller to range-check; undefined when not an integer. */
export function parseDecimalInteger(text: string): bigint | undefined {
  if (!/^-?\d+$/.test(text)) return undefined;
  const negative = text.startsWith("-");
  const digits = text.slice(negative ? 1 : 0).replace(/^0+(?=\d)/, "");
  // Beyond 20 digits every value is out of range and only its sign matters: a long string costs no big parse.
  return BigInt(`${negative ? "-" : ""}${digits.length > 20 ? "9".repeat(20) : digits}`);
}

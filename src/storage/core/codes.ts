/**
 * ONTAP error codes Patchbay returns. Codes marked "ONTAP" are documented by NetApp; the others are our
 * choice where ONTAP's code is unknown (listed in docs/ontap-compat.md — keep both in step).
 */
export const CODES = {
  /** ONTAP: entry doesn't exist (unknown uuid). */
  notFound: "4",
  /** ONTAP: not authorized for that command. */
  notAuthorized: "6",
  /** ONTAP: Unexpected argument "<name>" (unknown field or query parameter). */
  unexpectedArgument: "262179",
  /** Chosen: a field has a value of the wrong type or outside its allowed values. */
  invalidValue: "262185",
  /** Chosen: a required field is missing. */
  missingField: "262186",
  /** ONTAP: the SVM does not exist. */
  svmNotFound: "2621462",
  /** Chosen (ONTAP's volume-not-found code): the volume does not exist in the SVM. */
  volumeNotFound: "917927",
  /** Chosen: the qtree does not exist in the volume. */
  qtreeNotFound: "5242955",
  /** Chosen (suggested by the reference): invalid combination of fields for the rule type. */
  badCombination: "5308514",
  /** ONTAP: the quota rule UUID is invalid. */
  invalidRuleUuid: "5308545",
  /** Chosen (suggested by the reference): the quota rule already exists. */
  duplicateRule: "5308546",
  /** Chosen: an object with that name already exists (SVM, volume, qtree). */
  duplicateName: "5308547",
  /** ONTAP (ZAPI 14958): quota cannot be turned on without rules. */
  noQuotaRules: "14958",
  /** Chosen: the object still has dependents (an SVM with volumes). */
  hasDependents: "5308548",
  /** Chosen: the job was interrupted by a server stop (crash, kill) and failed at the next start. */
  jobInterrupted: "5308549",
} as const;

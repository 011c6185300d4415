/**
 * apimachinery/pkg/util/validation: the name and label checks selectors and object names use, with
 * their exact messages (kubectl users see them verbatim in 400/422 responses).
 */

export const EmptyError = (): string => "must be non-empty"
export const MaxLenError = (n: number): string => `must be no more than ${n} characters`

/** validation.RegexError: the message, the examples, and the regex. */
export const RegexError = (msg: string, fmt: string, ...examples: ReadonlyArray<string>): string => {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(" or ")}regex used for validation is '${fmt}')`
}

const qualifiedNameCharFmt = "[A-Za-z0-9]"
const qualifiedNameExtCharFmt = "[-A-Za-z0-9_.]"
const qualifiedNameFmt = `(${qualifiedNameCharFmt}${qualifiedNameExtCharFmt}*)?${qualifiedNameCharFmt}`
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const qualifiedNameMaxLength = 63
const qualifiedNameRegexp = new RegExp(`^${qualifiedNameFmt}$`)

const labelValueFmt = `(${qualifiedNameFmt})?`
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
export const LabelValueMaxLength = 63
const labelValueRegexp = new RegExp(`^${labelValueFmt}$`)

const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`
const dns1123SubdomainErrorMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
export const DNS1123SubdomainMaxLength = 253
const dns1123SubdomainRegexp = new RegExp(`^${dns1123SubdomainFmt}$`)

const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
export const DNS1123LabelMaxLength = 63
const dns1123LabelRegexp = new RegExp(`^${dns1123LabelFmt}$`)

/** IsDNS1123Subdomain (object names of most resources). */
export const isDNS1123Subdomain = (value: string): Array<string> => {
  const errs: Array<string> = []
  if (value.length > DNS1123SubdomainMaxLength) errs.push(MaxLenError(DNS1123SubdomainMaxLength))
  if (!dns1123SubdomainRegexp.test(value))
    errs.push(RegexError(dns1123SubdomainErrorMsg, dns1123SubdomainFmt, "example.com"))
  return errs
}

/** IsDNS1123Label (namespace names). */
export const isDNS1123Label = (value: string): Array<string> => {
  const errs: Array<string> = []
  if (value.length > DNS1123LabelMaxLength) errs.push(MaxLenError(DNS1123LabelMaxLength))
  if (!dns1123LabelRegexp.test(value)) errs.push(RegexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
  return errs
}

/** IsQualifiedName: `[prefix/]name`, the prefix a DNS subdomain, the name at most 63 characters. */
export const isQualifiedName = (value: string): Array<string> => {
  const errs: Array<string> = []
  const parts = value.split("/")
  let name: string
  if (parts.length === 1) {
    name = parts[0]!
  } else if (parts.length === 2) {
    const prefix = parts[0]!
    name = parts[1]!
    if (prefix.length === 0) errs.push("prefix part " + EmptyError())
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => "prefix part " + m))
  } else {
    return [
      "a qualified name " +
        RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    ]
  }
  if (name.length === 0) errs.push("name part " + EmptyError())
  else if (name.length > qualifiedNameMaxLength) errs.push("name part " + MaxLenError(qualifiedNameMaxLength))
  if (!qualifiedNameRegexp.test(name)) {
    errs.push("name part " + RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
  }
  return errs
}

/** IsValidLabelValue */
export const isValidLabelValue = (value: string): Array<string> => {
  const errs: Array<string> = []
  if (value.length > LabelValueMaxLength) errs.push(MaxLenError(LabelValueMaxLength))
  if (!labelValueRegexp.test(value))
    errs.push(RegexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
  return errs
}

/** field.Invalid(path, value, detail).Error(), with Go's %q of a string value. */
export const fieldInvalid = (path: string, value: string, detail: string): string =>
  `${path}: Invalid value: ${goQuote(value)}${detail === "" ? "" : `: ${detail}`}`

/** Go's %q for a string (JSON escaping is the same for what selectors can contain, bar \u escapes of <>&). */
export const goQuote = (s: string): string => JSON.stringify(s)

const configMapKeyFmt = "[-._a-zA-Z0-9]+"
const configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
const configMapKeyRegexp = new RegExp(`^${configMapKeyFmt}$`)

/** IsConfigMapKey: ConfigMap and Secret data keys (file names in a volume). */
export const isConfigMapKey = (value: string): Array<string> => {
  const errs: Array<string> = []
  if (value.length > DNS1123SubdomainMaxLength) errs.push(MaxLenError(DNS1123SubdomainMaxLength))
  if (!configMapKeyRegexp.test(value))
    errs.push(RegexError(configMapKeyErrMsg, configMapKeyFmt, "key.name", "KEY_NAME", "key-name"))
  if (value === ".") errs.push("must not be '.'")
  else if (value === "..") errs.push("must not be '..'")
  else if (value.startsWith("..")) errs.push("must not start with '..'")
  return errs
}

# jstr(s): s as a JSON string (POSIX awk; loaded before the go runner's other awk files). Bytes are kept
# as they are: a name that is UTF-8 stays readable, control characters are escaped.

BEGIN { for (i = 1; i < 32; i++) CTRL[sprintf("%c", i)] = sprintf("\\u%04x", i) }

function jstr(s,   out, i, n, c) {
  if (s !~ /[\\"\001-\037]/) return "\"" s "\""
  out = ""
  n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (c == "\\") out = out "\\\\"
    else if (c == "\"") out = out "\\\""
    else if (c in CTRL) out = out CTRL[c]
    else out = out c
  }
  return "\"" out "\""
}

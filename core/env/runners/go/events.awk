# The go runner's filter of `go test -json` (POSIX awk; run by run_state.sh): go's standard output in,
# the report's lines out on stdout, the tests' own output as text on stderr (the run's log).
# Kept for the report: every event but output (`output`, go 1.24's `build-output`: the log has them)
# and the events of subtests (`"Test":"TestA/case"`: their parent's final action covers them), and every
# line that is not JSON (before go 1.24 a build failure is a plain `FAIL\t<pkg> [build failed]` line, inside an
# output event in go 1.22 and 1.23: written out as that plain line).
# That keeps the report small: only it has to fit the grader's capture, whatever the tests print.

# The text of a JSON string that starts at s's first character (after the opening quote).
function unquote(s,   out, i, n, c, e, code) {
  out = ""
  n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (c == "\"") break
    if (c != "\\") { out = out c; continue }
    e = substr(s, ++i, 1)
    if (e == "n") out = out "\n"
    else if (e == "t") out = out "\t"
    else if (e == "r") out = out "\r"
    else if (e == "u") {
      code = substr(s, i + 1, 4)
      i += 4
      out = out (code ~ /^00[0-7][0-9a-fA-F]$/ ? sprintf("%c", hex(code)) : "?")
    } else out = out e
  }
  return out
}

function hex(h,   v, k) {
  v = 0
  for (k = 1; k <= length(h); k++) v = v * 16 + index("0123456789abcdef", tolower(substr(h, k, 1))) - 1
  return v
}

/^\{("Time":"[^"]*",)?"Action":"output",/ || /^\{"ImportPath":"[^"]*","Action":"build-output",/ {
  at = index($0, "\"Output\":\"")
  if (at > 0) {
    text = unquote(substr($0, at + 10))
    printf "%s", text > "/dev/stderr"
    # go 1.22 and 1.23 wrap the build failure line in an output event, with no FailedBuild field: kept as the
    # plain line it was before, or the package's fail reads as every requested test failing.
    if (text ~ /^FAIL\t[^ \t]+ \[(build|setup) failed\]\n$/) printf "%s", text
  }
  next
}

/^\{/ && /"Test":"[^"]*\// { next }

{
  print
  if ($0 !~ /^\{/) print > "/dev/stderr"
}

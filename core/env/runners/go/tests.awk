# The go runner's plan (POSIX awk, after json.awk; run by run_state.sh): which top-level tests each
# requested test file declares, grouped by directory.
#   FORESIGHT_GO_FILES="<file>\n..." awk -f json.awk -f tests.awk ./<file> ...
# Operands are the same files with "./" before them (an operand like a=b_test.go would be an
# assignment). Prints, per directory in the order of the files, four lines:
#   the directory (repo-relative, "." for the root)
#   the -run pattern: ^(TestA|FuzzB)$, or ^$ when the files declare none (the package is still built,
#     so a file that does not compile is seen)
#   the report's marker line: {"Action":"foresight-dir","Dir":"<dir>","Files":{"<file>":["TestA"],...}}
#   the directory as a JSON string
# A test is what `go test` runs as one: `func TestXxx(<name> *testing.T)` or `func FuzzXxx(... *testing.F)`
# declared at column 0 (gofmt's layout) outside block comments and raw strings, Xxx not starting with a
# lower-case letter; the package name before T/F may be any (an aliased import) or none (a dot import).
# FORESIGHT_SELECT ("<file>\t<test name>" lines, an empty name: the whole file): only those tests, and
# only when the file declares them.
# Files go test never builds (not *_test.go; a name starting with "_" or "."; under testdata/, vendor/,
# or a directory starting with "_" or ".") are left out with a note on stderr.

function built_by_go(f) {
  if (f !~ /_test\.go$/) return 0
  if (f ~ /(^|\/)(testdata|vendor)\//) return 0
  if (f ~ /(^|\/)[_.][^\/]*$/ || f ~ /(^|\/)[_.][^\/]*\//) return 0
  return 1
}

# Update the lexical state (in a block comment, in a raw string) over one line.
function scan(line,   i, n, c, q, d) {
  n = length(line)
  i = 1
  while (i <= n) {
    c = substr(line, i, 1)
    if (incomment) {
      if (c == "*" && substr(line, i + 1, 1) == "/") { incomment = 0; i += 2; continue }
      i++
      continue
    }
    if (inraw) {
      if (c == "`") inraw = 0
      i++
      continue
    }
    if (c == "/" && substr(line, i + 1, 1) == "/") return
    if (c == "/" && substr(line, i + 1, 1) == "*") { incomment = 1; i += 2; continue }
    if (c == "`") { inraw = 1; i++; continue }
    if (c == "\"" || c == "'") {
      q = c
      i++
      while (i <= n) {
        d = substr(line, i, 1)
        if (d == "\\") { i += 2; continue }
        if (d == q) break
        i++
      }
      i++
      continue
    }
    i++
  }
}

# The test a line declares, or "".
function declared(line,   s, name, rest, want, param) {
  if (line !~ /^func[ \t]+(Test|Fuzz)/) return ""
  s = line
  sub(/^func[ \t]+/, "", s)
  name = s
  sub(/[^A-Za-z0-9_\200-\377].*$/, "", name)
  if (substr(name, 5, 1) ~ /[a-z]/) return ""
  rest = substr(s, length(name) + 1)
  want = substr(name, 1, 4) == "Test" ? "T" : "F"
  param = "^[ \t]*\\([ \t]*([A-Za-z_][A-Za-z0-9_]*[ \t]+)?\\*[ \t]*([A-Za-z_][A-Za-z0-9_]*[ \t]*\\.[ \t]*)?" want "[ \t]*\\)"
  return rest ~ param ? name : ""
}

BEGIN {
  nsel = split(ENVIRON["FORESIGHT_SELECT"], sel, "\n")
  for (i = 1; i <= nsel; i++) {
    t = index(sel[i], "\t")
    if (t == 0) continue
    f = substr(sel[i], 1, t - 1)
    name = substr(sel[i], t + 1)
    selecting = 1
    if (name == "") whole[f] = 1
    else picked[f, name] = 1
  }
}

FNR == 1 {
  file = FILENAME
  sub(/^\.\//, "", file)
  inraw = 0
  incomment = 0
}

{
  if (!inraw && !incomment) {
    name = declared($0)
    if (name != "" && !((file, name) in seen)) {
      seen[file, name] = 1
      tests[file] = tests[file] " " name
    }
  }
  if ($0 ~ /[`\/"']/ || inraw || incomment) scan($0)
}

END {
  nfiles = split(ENVIRON["FORESIGHT_GO_FILES"], files, "\n")
  ndirs = 0
  for (i = 1; i <= nfiles; i++) {
    f = files[i]
    if (f == "" || (f in done)) continue
    done[f] = 1
    if (!built_by_go(f)) {
      print "run_state: left out " f ": go test does not build it" > "/dev/stderr"
      continue
    }
    d = f
    if (!sub(/\/[^\/]*$/, "", d)) d = "."
    if (!(d in dirfiles)) { order[++ndirs] = d; dirfiles[d] = "" }
    n = split(tests[f], names, " ")
    list = ""
    for (j = 1; j <= n; j++) {
      if (selecting && !(f in whole) && !((f, names[j]) in picked)) continue
      list = list (list == "" ? "" : ",") jstr(names[j])
      run[d] = run[d] (run[d] == "" ? "" : "|") names[j]
    }
    dirfiles[d] = dirfiles[d] (dirfiles[d] == "" ? "" : ",") jstr(f) ":[" list "]"
  }
  for (k = 1; k <= ndirs; k++) {
    d = order[k]
    print d
    print (run[d] == "" ? "^$" : "^(" run[d] ")$")
    print "{\"Action\":\"foresight-dir\",\"Dir\":" jstr(d) ",\"Files\":{" dirfiles[d] "}}"
    print jstr(d)
  }
}

# go's standard error (compiler errors, `go: ...` errors of the go command) as report lines (POSIX awk,
# after json.awk; run by run_state.sh): {"Action":"foresight-stderr","Output":"<line>"}, the first 40
# lines (the log has them all). The parser tells a package that does not build from a go command that
# cannot run at all (`go: go.mod requires go >= 1.22`, no go.mod) by them.

NR <= 40 { print "{\"Action\":\"foresight-stderr\",\"Output\":" jstr($0) "}" }

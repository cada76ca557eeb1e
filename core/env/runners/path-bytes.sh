# Sourced (POSIX sh) by checkout.sh and by grading's reset step (core/env/container/grade-steps.ts).
# File names reach the containers as foresight stores them (core/foundation/git.ts pathText): a name
# that is not UTF-8 comes C-quoted, as git writes it ("tests/caf\351.txt").
# Sets $path to the bytes of the stored name $1: itself, or, C-quoted, what printf's format makes of its
# escapes (the same as git's: \a \b \t \n \v \f \r \\ \ooo), with \" written \042 and % doubled first.
# The x on either side keeps a leading "-" from printf's options and a trailing newline from $(...).
path_bytes() {
  case $1 in
    \"*\")
      path=$(printf '%s' "$1" | sed -e 's/^"//' -e 's/"$//' -e 's/%/%%/g' -e 's/\\"/\\042/g')
      path=$(printf "x${path}x")
      path=${path#x}
      path=${path%x}
      ;;
    *) path=$1 ;;
  esac
}

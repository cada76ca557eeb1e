/**
 * Run as root in the build container (no network, /src read-only, the runner files already at
 * /foresight). Inputs: FORESIGHT_BASE_COMMIT, FORESIGHT_HISTORY, FORESIGHT_RUNNER_SCRIPT.
 * Part of the key: editing it makes new images.
 */
export const BUILD_SCRIPT = String.raw`set -eu
step() { printf '\n[foresight] $ %s\n' "$1"; }
fail() { printf '\n[foresight] FAILED: %s\n' "$*"; exit 1; }
base=$FORESIGHT_BASE_COMMIT
work=/tmp/foresight-eval-build
rm -rf "$work" /testbed
mkdir -p "$work"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" HOME="$work" GIT_TERMINAL_PROMPT=0 LC_ALL=C
# /src belongs to another uid; the local upload-pack reads the global config only (see runners/checkout.sh).
git config --global safe.directory '*'
git config --global init.defaultBranch unborn
git config --global protocol.version 2
# Protocol v2 takes any object as a want; say so for an older protocol too.
git config --global uploadpack.allowAnySHA1InWant true
git --git-dir=/src cat-file -e "$base^{commit}" 2>/dev/null || fail "commit $base is not in the clone mounted at /src"
depth=
[ "$FORESIGHT_HISTORY" = depth1 ] && depth=--depth=1

step "git init /testbed && git fetch --no-tags $depth file:///src $base && git checkout --detach $base"
git init -q /testbed || fail 'git init /testbed'
cd /testbed
# Only the objects reachable from the base commit travel: the pack upload-pack makes for this one want.
git fetch -q --no-tags --no-write-fetch-head $depth file:///src "$base" || fail "git fetch of $base from /src"
git -c advice.detachedHead=false checkout -q --detach "$base" || fail "git checkout $base"

step 'git reflog expire --all && git gc --prune=now'
git reflog expire --expire=now --expire-unreachable=now --all || fail 'git reflog expire'
rm -rf .git/logs .git/FETCH_HEAD .git/ORIG_HEAD
git gc -q --prune=now || fail 'git gc'

step "verify: /testbed holds the history of $base and nothing else"
[ "$(git rev-parse HEAD)" = "$base" ] || fail "HEAD is not $base"
if git symbolic-ref -q HEAD >/dev/null; then fail 'HEAD is a branch, not detached at the base commit'; fi
refs=$(git for-each-ref)
[ -z "$refs" ] || fail "refs left: $refs"
remotes=$(git remote)
[ -z "$remotes" ] || fail "remotes left: $remotes"
for f in logs FETCH_HEAD ORIG_HEAD MERGE_HEAD objects/info/alternates; do
  [ ! -e ".git/$f" ] || fail ".git/$f is left"
done
unreachable=$(git fsck --connectivity-only --unreachable --no-reflogs --no-progress 2>&1) || fail "git fsck: $unreachable"
[ -z "$unreachable" ] || fail "objects unreachable from $base: $(printf '%s\n' "$unreachable" | head -5)"
n=$(git rev-list --count HEAD)
[ "$(git rev-list --all | wc -l)" = "$n" ] || fail 'git rev-list --all lists commits outside the history of HEAD'
if [ "$FORESIGHT_HISTORY" = depth1 ]; then
  [ "$n" = 1 ] || fail "the depth-1 store holds $n commits"
else
  want=$(git --git-dir=/src rev-list --count "$base")
  [ "$n" = "$want" ] || fail "the store holds $n of the $want commits up to $base"
  [ ! -e .git/shallow ] || fail 'the full-history store is shallow'
fi
dirty=$(git status --porcelain --untracked-files=all)
[ -z "$dirty" ] || fail "the work tree is not clean: $dirty"
[ -f "/foresight/$FORESIGHT_RUNNER_SCRIPT" ] || fail "/foresight/$FORESIGHT_RUNNER_SCRIPT is missing"
echo "[foresight] $n commit(s), $(git count-objects -v | sed -n 's/^in-pack: //p') objects, $(du -sk .git | cut -f1) KiB of git store"

step 'chown -R 65534:65534 /testbed'
# A harness running git as another user (root) must not be refused for "dubious ownership".
env -u GIT_CONFIG_NOSYSTEM git config --system --replace-all safe.directory /testbed || fail 'git config --system'
chown -R 65534:65534 /testbed || fail 'chown /testbed'
cd /
rm -rf "$work"
echo '[foresight] eval image ready'
`;

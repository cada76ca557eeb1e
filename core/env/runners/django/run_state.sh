#!/bin/sh
# In-container primitive of the django runner (POSIX sh; mounted read-only at /foresight).
#   run_state.sh <checkout_sha|.> <overlay_sha|-> <log_out> <test_files...>
# Same contract and git part as runners/pytest/run_state.sh (both source runners/checkout.sh):
# in /tmp/testbed (cloned once from the read-only git dir at /src) check out <checkout_sha>, remove
# every untracked/ignored file, overlay the given test files that exist at <overlay_sha>, keep the
# test files that exist now. Then run Django's own runner on them:
#   cd tests && "$FORESIGHT_PYTHON" runtests.py --settings=test_sqlite --parallel 1 -v 2 --noinput <labels>
# (--parallel 1 only where runtests.py has the option, Django 1.9+; the state's own runtests.py, never
# the overlay's)
# (tests/foo/tests.py -> foo.tests, tests/foo/tests/test_x.py -> foo.tests.test_x; files that are
# not modules of a test app under tests/ are ignored, with a note), with the checkout first on
# PYTHONPATH, through a small in-process wrapper (SHIM below) that changes nothing in Django's
# runner except:
#   - a test module that raises anything while being imported becomes a failed test of that module,
#     as unittest already does for ImportError (pytest --continue-on-collection-errors); the other
#     modules still run;
#   - marker lines "[foresight-django] import-error <label>" and "[foresight-django] collected <test>"
#     (every test of the suite, printed before it runs) for the parser.
# Django has no JUnit: <log_out> receives the whole run log instead, in one stream (stdout+stderr of
# the runner through one pipe, so the order is exact): a header ("[foresight-django] v1", one
# "[foresight-django] label <label> <file>" line per label), runtests' output, and a trailer
# "[foresight-django] exit <code>" (missing when the run was killed). parse-django.ts reads it.
# No test module existing is a successful run of zero tests (exit 0).
# Exit: runtests' exit code; 90 clone failed, 91 checkout failed, 92 overlay failed, 93 no tests/
# directory or no runtests.py, 64 usage.
# FORESIGHT_PASSES=<n> (a repeat, run_chain.ts): the suite runs n times in this one process, on test
# databases set up once; the log has a "[foresight-django] pass <k>" line before each pass and a
# "[foresight-django] pass-end <k> <0|1>" line after it (1: a test failed); parse-django.ts's
# splitPasses reads one report per pass. Needs DiscoverRunner.build_suite and run_suite (Django 1.6+);
# without them the suite runs once, with no pass lines.
# FORESIGHT_PYTHON: the interpreter (an env image sets it to its venv); default python3.
# FORESIGHT_SRC / FORESIGHT_TESTBED override /src and /tmp/testbed (host runs, fixture generation).
# <checkout_sha> "." (with overlay "-") runs in place on the work tree at $FORESIGHT_TESTBED as it is
# (grading in an eval image, see checkout.sh).
set -u
if [ $# -lt 3 ]; then
  echo "usage: run_state.sh <checkout_sha|.> <overlay_sha|-> <log_out> <test_files...>" >&2
  exit 64
fi
checkout=$1 overlay=$2 log=$3
shift 3
src=${FORESIGHT_SRC:-/src}
testbed=${FORESIGHT_TESTBED:-/tmp/testbed}
PY=${FORESIGHT_PYTHON:-python3}
export HOME="${HOME:-/tmp}"
export GIT_TERMINAL_PROMPT=0
rm -f "$log"

die() { code=$1; shift; echo "run_state: $*" >&2; exit "$code"; }

. "$(dirname "$0")/../checkout.sh"
# tests/runtests.py is the runner, not a test: a PR's own copy (laid over as a support file) may import
# what only the PR adds (django.test.selenium at 44c0ecdd92's base), so each state runs its own.
if [ "$overlay" != - ] && [ "$(git cat-file -t "$checkout:tests/runtests.py" 2>/dev/null)" = blob ]; then
  git checkout -q "$checkout" -- tests/runtests.py || die 92 "cannot restore tests/runtests.py of $checkout"
fi

note() {
  printf '[foresight-django] %s\n' "$*"
  printf '[foresight-django] %s\n' "$*" >>"$log" || die 90 "cannot write $log"
}
: >"$log" || die 90 "cannot write $log"
note v1

# runtests.py aborts the whole run ("A GIS database backend is required") when a gis_tests label is
# given without one: those labels are left out unless the run's database is PostGIS.
needs_gis() {
  case $1 in gis_tests|gis_tests.*) [ "${FORESIGHT_DB:-}" != postgis ] ;; *) return 1 ;; esac
}

# Keep the test files that exist now, as Django test labels (deduplicated, in the given order).
n=$#
labels=' '
for f do
  [ -f "$f" ] || continue
  case $f in
    tests/*/*.py) ;;
    *) note "ignored $f: not a module of a test app under tests/"; continue ;;
  esac
  label=$(printf '%s\n' "${f#tests/}" | sed 's/\.py$//; s|/|.|g')
  if ! printf '%s\n' "$label" | grep -Eq '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'; then
    note "ignored $f: not an importable module path"
    continue
  fi
  case $labels in *" $label "*) continue ;; esac
  if needs_gis "$label"; then note "ignored $f: gis_tests need a GIS database backend (FORESIGHT_DB=postgis)"; continue; fi
  labels="$labels$label "
  note "label $label $f"
  set -- "$@" "$label"
done
shift "$n"

# FORESIGHT_SELECT (a repeat of the tests that decide a set): "<file>\t<label>" lines run those labels
# instead (dotted method labels app.tests.Class.test_x; an empty label: the whole file), those whose
# file exists now. Each gets a "label <label> <file>" line, so import errors map to their file.
if [ -n "${FORESIGHT_SELECT:-}" ]; then
  set --
  tab=$(printf '\t')
  while IFS= read -r line; do
    f=${line%%"$tab"*} label=${line#*"$tab"}
    [ -n "$f" ] && [ -f "$f" ] || continue
    [ -n "$label" ] || label=$(printf '%s\n' "${f#tests/}" | sed 's/\.py$//; s|/|.|g')
    if ! printf '%s\n' "$label" | grep -Eq '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'; then
      note "ignored $label: not an importable label"
      continue
    fi
    if needs_gis "$label"; then note "ignored $label: gis_tests need a GIS database backend (FORESIGHT_DB=postgis)"; continue; fi
    note "label $label $f"
    set -- "$@" "$label"
  done <<EOF
$FORESIGHT_SELECT
EOF
fi

if [ $# -eq 0 ]; then
  note "none of the test modules exists at this state: 0 tests"
  note "exit 0"
  exit 0
fi
[ -f tests/runtests.py ] || die 93 "no tests/runtests.py at $checkout: not a Django checkout"
cd tests || die 93 "no tests/ directory"

# Runs tests/runtests.py as __main__ (as `python runtests.py` would) after two patches; Python 3.6+.
SHIM='
import os, runpy, sys, unittest, unittest.loader as L

quiet = []

def note(s):
    if quiet:
        return
    sys.stderr.write("[foresight-django] %s\n" % s)
    sys.stderr.flush()

def cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            for c in cases(t):
                yield c
        else:
            yield t

_load = L.TestLoader.loadTestsFromName

def loadTestsFromName(self, name, module=None):
    try:
        suite = _load(self, name, module)
    except Exception:
        # unittest turns only ImportError into a failed test; do it for any import-time exception.
        note("import-error %s" % name)
        suite, message = L._make_failed_import_test(name, self.suiteClass)
        self.errors.append(message)
        return suite
    if module is None and any(isinstance(t, L._FailedTest) for t in cases(suite)):
        note("import-error %s" % name)
    return suite

L.TestLoader.loadTestsFromName = loadTestsFromName

here = os.getcwd()
script = os.path.join(here, "runtests.py")
sys.argv[0] = script
sys.path[0] = here
try:
    from django.test.runner import DiscoverRunner
except Exception:
    DiscoverRunner = None  # runtests.py reports the failure itself
built = []
if DiscoverRunner is not None and hasattr(DiscoverRunner, "build_suite"):
    _build = DiscoverRunner.build_suite

    def build_suite(self, *args, **kwargs):
        built.append((args, kwargs))
        suite = _build(self, *args, **kwargs)
        try:
            for t in cases(suite):
                note("collected %s" % t)
        except Exception:
            pass
        return suite

    DiscoverRunner.build_suite = build_suite
passes = int(os.environ.get("FORESIGHT_PASSES") or "1")
if passes > 1 and DiscoverRunner is not None and hasattr(DiscoverRunner, "build_suite") and hasattr(DiscoverRunner, "run_suite"):
    _run_suite = DiscoverRunner.run_suite

    # A test that declares a model in its body registers it in the process-wide app registry; the
    # next pass would register it again (a RuntimeWarning, an error under runtests.py) and read as
    # flaky. Each pass starts from the registry as the suite found it (Django 1.7+ has one).
    def models_of_apps():
        try:
            from django.apps import apps
            return apps, dict((label, dict(ms)) for label, ms in apps.all_models.items())
        except Exception:
            return None

    def restore_models(registry):
        if registry is None:
            return
        apps, saved = registry
        for label in list(apps.all_models):
            ms = apps.all_models[label]  # the models dict of its app config: changed in place
            ms.clear()
            ms.update(saved.get(label, {}))
        apps.clear_cache()

    def run_suite(self, suite, *args, **kwargs):
        # FORESIGHT_PASSES: the suite runs that many times on the same test databases, one
        # "pass <k>" ... "pass-end <k> <0|1>" section each. unittest empties a suite as it runs it,
        # so each later pass loads the same labels again (the modules are already imported).
        result = None
        registry = models_of_apps()
        for k in range(1, passes + 1):
            if k > 1:
                restore_models(registry)
                quiet.append(1)
                try:
                    suite = _build(self, *built[0][0], **built[0][1])
                finally:
                    quiet.pop()
            note("pass %d" % k)
            result = _run_suite(self, suite, *args, **kwargs)
            bad = len(result.failures) + len(result.errors) + len(getattr(result, "unexpectedSuccesses", ()))
            note("pass-end %d %d" % (k, 1 if bad else 0))
        return result

    DiscoverRunner.run_suite = run_suite
try:
    runpy.run_path(script, run_name="__main__")
    code = 0
except SystemExit as e:
    code = e.code
# The interpreter shutdown (tearing down every module of Django and of its test suite) takes ~1 s
# after the last test: do what of it matters (wait for threads, atexit handlers, flush) and leave.
import threading
shutdown = getattr(threading, "_shutdown", None)
if shutdown is not None:
    shutdown()
import atexit
run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
if run_exitfuncs is None:
    sys.exit(code)
run_exitfuncs()
if code is not None and not isinstance(code, int):
    sys.stderr.write("%s\n" % (code,))
    code = 1
sys.stdout.flush()
sys.stderr.flush()
os._exit((code or 0) & 255)
'

export PYTHONPATH="$testbed${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
rcfile="$log.rc"
rm -f "$rcfile"
# --parallel exists from Django 1.9 on; 1.8's runtests.py rejects it (its runs are serial anyway).
parallel='--parallel 1'
grep -Eq "[\"']--parallel[\"']" runtests.py || parallel=
# PyPy (the 3.7 era, Django <= 1.10): the JIT's warm-up costs more than it saves in a test run, so it
# compiles only very hot loops (admin_changelist + admin_widgets: 50 s -> 18 s).
pyflags=
case $(readlink -f "$(command -v "$PY")" 2>/dev/null) in *pypy*) pyflags='--jit threshold=200000' ;; esac
# One pipe for stdout and stderr: the log keeps the order in which the runner wrote them.
{ "$PY" $pyflags -c "$SHIM" --settings="${FORESIGHT_DJANGO_SETTINGS:-test_sqlite}" $parallel -v 2 --noinput "$@" 2>&1; echo $? >"$rcfile"; } \
  | tee -a "$log"
rc=$(cat "$rcfile" 2>/dev/null)
rm -f "$rcfile"
# The trailer on a line of its own even when the runner's last output had no newline.
if [ -n "$(tail -c 1 "$log")" ]; then echo; echo >>"$log"; fi
case $rc in ''|*[!0-9]*) die 90 "the test runner's exit code was lost" ;; esac
note "exit $rc"
exit "$rc"

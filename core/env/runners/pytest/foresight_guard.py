"""pytest plug-in loaded first in guarded grading (run_state.sh, FORESIGHT_GUARD=1): the run is no
evidence when the code under test changed pytest's own machinery while it ran.

The patch's source runs inside the test process, so it could make a failing test pass without touching
any file of the harness: replace Function.runtest, the report's outcome, JUnit's writer. This module is
imported before any test module (and so before the package under test), records what those names are
bound to and the code objects behind them, and checks them before each test and before the report is
written. A change, or a `runtest` set on a test item itself, ends the process with exit 70 and no
report: the grader counts the run as no evidence, and a prediction whose runs are no evidence while the
gold patch's are scores 0.
"""
import os

import _pytest.junitxml
import _pytest.python
import _pytest.reports
import _pytest.runner
import pytest
import unittest.case

try:
    import _pytest.unittest as _pytest_unittest
except ImportError:  # very old pytest
    _pytest_unittest = None

EXIT_TAMPERED = 70
# The real stderr, taken before pytest's capture replaces fd 2 (captured text dies with os._exit).
_STDERR = os.dup(2)

WATCHED = [
    (_pytest.runner, ["call_and_report", "runtestprotocol", "call_runtest_hook", "pytest_runtest_makereport", "CallInfo.from_call"]),
    (_pytest.python, ["Function.runtest", "Function.setup", "pytest_pyfunc_call"]),
    (_pytest.reports, ["TestReport.from_item_and_call", "TestReport.__init__", "BaseReport.passed", "BaseReport.failed"]),
    (_pytest.junitxml, ["LogXML.pytest_runtest_logreport", "LogXML.pytest_sessionfinish", "LogXML.finalize", "LogXML.node_reporter"]),
    (unittest.case, ["TestCase.run", "TestCase.__call__"]),
]
if _pytest_unittest is not None:
    WATCHED.append((_pytest_unittest, ["TestCaseFunction.runtest"]))


def _lookup(module, dotted):
    obj = module
    for part in dotted.split("."):
        # A class attribute itself (a function or a property), not what an instance would get.
        obj = vars(obj).get(part) if isinstance(obj, type) and part in vars(obj) else getattr(obj, part, None)
    return obj


def _state(obj):
    code = getattr(obj, "__code__", None)
    for accessor in ("fget", "__func__"):
        inner = getattr(obj, accessor, None)
        if inner is not None:
            code = getattr(inner, "__code__", code)
    return (id(obj), obj, code, getattr(code, "co_code", None))


def _snapshot():
    return {"%s.%s" % (m.__name__, name): _state(_lookup(m, name)) for m, names in WATCHED for name in names}


_BASE = _snapshot()


def _check(where, item=None):
    now = _snapshot()
    changed = sorted(k for k, v in now.items() if v[1] is not _BASE[k][1] or v[2] is not _BASE[k][2] or v[3] != _BASE[k][3])
    if item is not None and "runtest" in vars(item):
        changed.append("%s.runtest (set on the test item)" % item.nodeid)
    if changed:
        message = "[foresight-guard] %s: pytest's own code changed while the tests ran: %s\n" % (where, ", ".join(changed))
        os.write(_STDERR, message.encode("utf-8", "replace"))
        os._exit(EXIT_TAMPERED)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _check("before %s" % item.nodeid, item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    _check("running %s" % item.nodeid, item)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    _check("before the report")

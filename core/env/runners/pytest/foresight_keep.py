"""pytest plug-in of the runner (loaded with -p from this folder): which collected cases run.

FORESIGHT_KEEP, lines "<module>\t<data file>\t<data file>...": a module run because it reads a PR's data
files (sqlfluff's dialects_test.py over test/fixtures/dialects/**) runs only the parametrised cases whose
id names one of them (the file's stem as whole words, narrowed to those naming its folder too when some
do), plus FORESIGHT_KEEP_SAMPLE of its other cases as a regression sample. A module whose ids name none of
the files runs whole: it reads them some other way.

FORESIGHT_SAMPLE=<n>: every other file runs at most n of its cases (a probe that the tests run at all).

The sample is the n cases with the smallest sha1 of their node id: the same cases at every commit, so
a case passing in one state is the same case in the next. Everything else is deselected, not skipped.
"""
import hashlib
import os
import re

_WORD = re.compile(r"[^A-Za-z0-9_]+")


def _words(text):
    return [w for w in _WORD.split(text) if w]


def _names(words, phrase):
    n = len(phrase)
    return n > 0 and any(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def _prefixes(words, phrase):
    """The phrase opens a word joined by "_": a file's cases named <stem>_<case> (sqlfluff's AL01.yml: AL01_test_x)."""
    n = len(phrase)
    return n > 0 and any(words[i:i + n - 1] == phrase[:-1] and words[i + n - 1].startswith(phrase[-1] + "_") for i in range(len(words) - n + 1))


def _rules():
    rules = {}
    for line in os.environ.get("FORESIGHT_KEEP", "").splitlines():
        parts = [p for p in line.split("\t") if p]
        if len(parts) > 1:
            rules[os.path.normpath(parts[0])] = parts[1:]
    return rules


def _int(name):
    try:
        return max(0, int(os.environ.get(name, "")))
    except ValueError:
        return None


def _file(item):
    path = getattr(item, "path", None) or item.fspath
    return os.path.normpath(os.path.relpath(str(path), os.getcwd()))


def _param(item):
    spec = getattr(item, "callspec", None)
    return getattr(spec, "id", None) or ""


def _sample(items, n):
    return sorted(items, key=lambda i: hashlib.sha1(i.nodeid.encode("utf-8", "surrogateescape")).hexdigest())[:n]


def _named(cases, name, within, match=_names):
    """The items whose id words name `name`, narrowed to those naming `within` too when some do."""
    hits = [(i, w) for i, w in cases if match(w, name)]
    return [i for i, w in hits if _names(w, within)] or [i for i, _ in hits]


def _targets(items, data):
    # Each id split into words once: a dialect module has thousands of cases, a PR dozens of files.
    cases = [(i, _words(_param(i))) for i in items]
    chosen = []
    for f in data:
        folder = os.path.dirname(f)
        stem = _words(os.path.splitext(os.path.basename(f))[0])
        name, parent = _words(os.path.basename(folder)), _words(os.path.basename(os.path.dirname(folder)))
        # A case kept in a folder of its own (autofix/<dialect>/<case>/before.sql) is named by the folder.
        chosen.extend(_named(cases, stem, name) or _named(cases, stem, name, _prefixes) or _named(cases, name, parent))
    return chosen


def pytest_collection_modifyitems(session, config, items):
    rules = _rules()
    keep_sample = _int("FORESIGHT_KEEP_SAMPLE")
    sample = _int("FORESIGHT_SAMPLE")
    if not rules and sample is None:
        return
    by_file = {}
    for item in items:
        by_file.setdefault(_file(item), []).append(item)
    kept = set()
    for path, group in by_file.items():
        data = rules.get(path)
        if data is not None:
            targets = _targets(group, data)
            if not targets:
                kept.update(id(i) for i in group)
                continue
            kept.update(id(i) for i in targets)
            rest = [i for i in group if id(i) not in kept]
            kept.update(id(i) for i in _sample(rest, keep_sample or 0))
        elif sample is not None:
            kept.update(id(i) for i in _sample(group, sample))
        else:
            kept.update(id(i) for i in group)
    dropped = [i for i in items if id(i) not in kept]
    if dropped:
        items[:] = [i for i in items if id(i) in kept]
        config.hook.pytest_deselected(items=dropped)

"""Restore the test harness of a work tree to its gold version before grading (run by the grader).

    python3 -I -c "<this file>" <spec-json>

Run in the work tree (a git checkout of the row's base commit, the agent's patch applied, nothing of
the patch's code run yet), with the system Python and -I, so nothing the patch added is imported.
The spec (JSON) is the runner's harness declaration plus the row's facts:
    gold:      a tree-ish: the base commit with the row's own patch applied (git write-tree)
    whole:     glob patterns of files restored whole to the gold tree, or removed when it lacks them
    sections:  [{glob, format: ini|toml|json, names: [...]}]: only these sections of such a file are
               restored (a JSON file's named top-level keys; its other keys stay as the patch left them)
    newFiles:  glob patterns of files that may not be new: one the gold tree lacks is removed
    testDirs:  directories in which every new file is removed (it could shadow a graded test)
    protect:   paths restored whole (the graded test files and the bundle's)
    plugins:   true: the plug-in modules the gold configuration loads (pytest's -p, pytest_plugins)
               are restored whole too
    configModules: jest|vitest|mocha: the repository modules that runner's gold configuration loads
               (setup files, global setup, test environment, mocha's require) are restored whole too
Paths in the spec and the output are stored names: a name that is not UTF-8 is git's C-quoted form
("tests/caf\\351.txt"); inside, names are str with surrogateescape, as git's output is read.
Prints one JSON object: {"changes": [{"path", "action": reset|removed|sections}]}; exits 1 with a
message when git fails (the grader treats that as its own failure, never as the agent's).
"""
import ast
import configparser
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11: the section splice below needs no TOML parser
    tomllib = None

ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
QUOTES = {v: "\\" + k for k, v in ESCAPES.items()}


def from_stored(name):
    """A stored name as a path: a C-quoted one back to its bytes (surrogateescape), any other as it is."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    s, out, i = name[1:-1], bytearray(), 0
    while i < len(s):
        if s[i] != "\\":
            out += s[i].encode("utf-8")
            i += 1
        elif re.match(r"[0-3][0-7]{2}", s[i + 1 : i + 4]):
            out.append(int(s[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(ESCAPES[s[i + 1]])
            i += 2
    return out.decode("utf-8", "surrogateescape")


def to_stored(path):
    """A path as a stored name: itself when it is UTF-8 (and does not start with a quote), else C-quoted as git writes it."""
    raw = path.encode("utf-8", "surrogateescape")
    try:
        raw.decode("utf-8")
        if not path.startswith('"'):
            return path
    except UnicodeDecodeError:
        pass
    return '"' + "".join(QUOTES.get(b) or (chr(b) if 0x20 <= b < 0x7F else "\\%03o" % b) for b in raw) + '"'


spec = json.loads(sys.argv[1])
gold = spec["gold"]


def git(*args, text=True):
    r = subprocess.run(["git", *args], capture_output=True)
    if r.returncode != 0:
        sys.stderr.write("harness: git %s failed: %s\n" % (" ".join(args), r.stderr.decode("utf-8", "replace").strip()))
        sys.exit(1)
    return r.stdout.decode("utf-8", "surrogateescape") if text else r.stdout


def nul_list(out):
    return [p for p in out.split("\0") if p]


gold_files = set(nul_list(git("ls-tree", "-r", "-z", "--name-only", gold)))
# What the patch changed: tracked files that differ from the base (deleted included), and every file
# git does not track (ignored ones too: a .gitignore'd conftest.py is collected all the same).
changed = set(nul_list(git("diff", "--name-only", "-z", "--no-renames", "HEAD")))
untracked = set(nul_list(git("ls-files", "-z", "--others")))
touched = changed | untracked
# Harness files the row's own patch changes are restored to its version even where the agent left them.
gold_diff = set(nul_list(git("diff", "--name-only", "-z", "--no-renames", "HEAD", gold)))


def glob_re(pattern):
    """A glob as a regex: ** spans directories, * and ? stay inside one path segment."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        out += "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
        i += 1
    return re.compile("^" + out + "$")


def matcher(patterns):
    res = [glob_re(p) for p in patterns]
    return lambda path: any(r.match(path) for r in res)


is_whole = matcher(spec.get("whole", []))
is_new_forbidden = matcher(spec.get("newFiles", []))
test_dirs = [from_stored(d).rstrip("/") + "/" for d in spec.get("testDirs", []) if d]
protect = set(from_stored(p) for p in spec.get("protect", []))
section_rules = [(glob_re(s["glob"]), s) for s in spec.get("sections", [])]


def sections_of(path):
    return next((s for r, s in section_rules if r.match(path)), None)


def gold_text(path):
    if path not in gold_files:
        return None
    return git("show", "%s:%s" % (gold, path), text=False).decode("utf-8", "replace")


def plugin_modules():
    """Modules the gold configuration loads as pytest plug-ins: -p in addopts, pytest_plugins in conftests."""
    mods = set()
    opts = []
    for name, sect in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        text = gold_text(name)
        if text is None:
            continue
        cp = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            cp.read_string(text)
            opts.append(cp.get(sect, "addopts", fallback=""))
        except configparser.Error:
            pass
    text = gold_text("pyproject.toml")
    if text is not None and tomllib is not None:
        try:
            ini = tomllib.loads(text).get("tool", {}).get("pytest", {}).get("ini_options", {})
            a = ini.get("addopts", "")
            opts.append(" ".join(a) if isinstance(a, list) else str(a))
        except Exception:
            pass
    for o in opts:
        try:
            words = shlex.split(o)
        except ValueError:
            words = o.split()
        for i, w in enumerate(words):
            name = words[i + 1] if w == "-p" and i + 1 < len(words) else w[2:] if w.startswith("-p") and len(w) > 2 else None
            if name and not name.startswith("no:"):
                mods.add(name)
    for path in gold_files:
        if os.path.basename(path) != "conftest.py":
            continue
        try:
            tree = ast.parse(gold_text(path) or "")
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets):
                v = node.value
                items = [v] if isinstance(v, ast.Constant) else list(getattr(v, "elts", []))
                for it in items:
                    if isinstance(it, ast.Constant) and isinstance(it.value, str):
                        mods.add(it.value)
    files = set()
    for m in mods:
        base = m.replace(".", "/")
        for root in ("", "src/"):
            for cand in (root + base + ".py", root + base + "/__init__.py"):
                files.add(cand)
    return files


plugin_files = plugin_modules() if spec.get("plugins") else set()


# Per JavaScript runner: its configuration files (name patterns), its key in package.json, and the
# options whose values name modules the runner loads before or around the tests. Values are read from
# the text, never by running the configuration: it could import the patch's code.
JS_CONFIG = {
    "jest": (
        r"jest\.config\.(?:[cm]?[jt]s|json)",
        "jest",
        ("setupFiles", "setupFilesAfterEnv", "globalSetup", "globalTeardown", "testEnvironment", "testRunner",
         "testSequencer", "snapshotResolver", "resolver", "runner", "reporters", "transform", "preset"),
    ),
    "vitest": (
        r"(?:vitest|vite)\.config\.[cm]?[jt]s|vitest\.workspace\.(?:[cm]?[jt]s|json)",
        None,
        ("setupFiles", "globalSetup", "environment", "reporters"),
    ),
    "mocha": (r"\.mocharc\.(?:[cm]?js|json|jsonc|ya?ml)|mocha\.opts", "mocha", ("require", "file", "ui")),
}
JS_EXTS = ("", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx", ".json")
JS_STRING = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`([^`$\\]*)`""")


def js_value_strings(text, key):
    """The string literals of `key: <value>` in a JavaScript/JSON object literal: a string, or every string inside an array or object."""
    out = []
    for m in re.finditer(r"(?<![\w$.])[\"']?" + re.escape(key) + r"[\"']?\s*:\s*", text):
        i = m.end()
        if i >= len(text):
            continue
        if text[i] in "'\"`":
            s = JS_STRING.match(text, i)
            if s:
                out.append(next(g for g in s.groups() if g is not None))
            continue
        if text[i] not in "[{":
            continue
        depth, j = 0, i
        while j < len(text):
            c = text[j]
            if c in "'\"`":
                s = JS_STRING.match(text, j)
                if s:
                    out.append(next(g for g in s.groups() if g is not None))
                    j = s.end()
                    continue
            elif c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
    return out


def yaml_value_strings(text, key):
    """`key: value`, `key: [a, b]` or `key:` and a block of `- item` lines of a flat YAML file (.mocharc.yml)."""
    out, lines = [], text.splitlines()
    for n, line in enumerate(lines):
        m = re.match(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*:\s*(.*?)\s*(?:#.*)?$", line)
        if not m:
            continue
        v = m.group(1)
        if v.startswith("["):
            out += [x.strip().strip("\"'") for x in v.strip("[]").split(",") if x.strip()]
        elif v:
            out.append(v.strip("\"'"))
        else:
            for item in lines[n + 1 :]:
                im = re.match(r"^\s*-\s*(.*?)\s*(?:#.*)?$", item)
                if not im:
                    break
                out.append(im.group(1).strip("\"'"))
    return out


def json_strings(value):
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in json_strings(v)]
    return []


def js_config_modules(runner):
    """Repository paths the gold configuration of a JavaScript runner may load as modules (each value with the extensions Node and the runners try)."""
    names, pkg_key, keys = JS_CONFIG[runner]
    is_config = re.compile(r"^(?:%s)$" % names)
    values = []  # (directory of the configuration, value)
    for path in sorted(gold_files):
        base, where = os.path.basename(path), os.path.dirname(path)
        if base == "package.json" and pkg_key is not None:
            try:
                cfg = json.loads(gold_text(path) or "{}").get(pkg_key)
            except (ValueError, AttributeError):
                continue
            if isinstance(cfg, dict):
                values += [(where, v) for k in keys for v in json_strings(cfg.get(k))]
        elif is_config.match(base):
            text = gold_text(path) or ""
            if base == "mocha.opts":
                # mocha.opts sits in test/, its paths relative to the working directory (the root).
                words = text.split()
                values += [("", words[i + 1]) for i, w in enumerate(words[:-1]) if w in ("--require", "-r", "--file", "--ui", "-u")]
            elif base.endswith((".yml", ".yaml")):
                values += [(where, v) for k in keys for v in yaml_value_strings(text, k)]
            else:
                values += [(where, v) for k in keys for v in js_value_strings(text, k)]
    files = set()
    for where, v in values:
        v = v.strip()
        if v.startswith("<rootDir>/"):
            v = v[len("<rootDir>/") :]
        if not v or v.startswith("/") or "\0" in v:
            continue
        for root in {where, ""}:
            p = os.path.normpath(os.path.join(root, v)) if root else os.path.normpath(v)
            if p.startswith("../") or p == ".." or p == ".":
                continue
            for ext in JS_EXTS:
                files.add(p + ext)
                if ext:
                    files.add(p + "/index" + ext)
            if runner == "jest":
                files.update(p + "/jest-preset" + e for e in (".js", ".cjs", ".mjs", ".json"))
    return files


config_files = js_config_modules(spec["configModules"]) if spec.get("configModules") in JS_CONFIG else set()


INI_HEADER = re.compile(r"^\[([^\]]+)\]\s*$")
TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def split_sections(text, header, name_of):
    """[(section name or None before the first header, its lines)], the header line first in each."""
    parts, cur, name = [], [], None
    for line in text.splitlines(keepends=True):
        m = header.match(line)
        if m:
            parts.append((name, cur))
            cur, name = [], name_of(m.group(1))
        cur.append(line)
    parts.append((name, cur))
    return parts


def split_ini(text):
    return split_sections(text, INI_HEADER, str.strip)


def split_toml(text):
    return split_sections(text, TOML_HEADER, lambda h: re.sub(r"\s*\.\s*", ".", h).replace('"', "").replace("'", ""))


def splice_ini(patched, gold_src, names):
    """The patched INI text with the named sections taken from the gold text (dropped when gold lacks them)."""

    gold_parts = {n: c for n, c in split_ini(gold_src or "") if n in names}
    out, done = [], set()
    for n, c in split_ini(patched):
        if n in names:
            if n in gold_parts and n not in done:
                out.extend(gold_parts[n])
                done.add(n)
            continue
        out.extend(c)
    for n, c in gold_parts.items():
        if n not in done:
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            out.extend(c)
    return "".join(out)


def splice_toml(patched, gold_src, prefixes):
    """The patched TOML text with every table under the prefixes taken from the gold text."""

    def owned(header):
        return any(header == p or header.startswith(p + ".") for p in prefixes)

    gold_own = [c for n, c in split_toml(gold_src or "") if n is not None and owned(n)]
    out = [line for n, c in split_toml(patched) if n is None or not owned(n) for line in c]
    # A dotted key at the top level ("tool.pytest.ini_options.addopts = ...") is the same table.
    out = [line for line in out if not re.match(r"^\s*tool\s*\.\s*pytest\b", line) or not any(p.startswith("tool.pytest") for p in prefixes)]
    for c in gold_own:
        if out and not out[-1].endswith("\n"):
            out.append("\n")
        out.extend(c)
    return "".join(out)


def splice_json(patched, gold_src, names):
    """The patched JSON object with the named top-level keys taken from the gold text (dropped where gold
    lacks them), indented as the patched file was; the patched text itself when they already agree.
    ValueError when either text is not a JSON object."""
    mine = json.loads(patched)
    theirs = json.loads(gold_src) if gold_src is not None else {}
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        raise ValueError("not a JSON object")
    def same(a, b):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    if all((n in mine) == (n in theirs) and same(mine.get(n), theirs.get(n)) for n in names):
        return patched
    for n in names:
        if n in theirs:
            mine[n] = theirs[n]
        else:
            mine.pop(n, None)
    m = re.search(r"\n([ \t]+)\S", patched)
    text = json.dumps(mine, indent=m.group(1) if m else 2, ensure_ascii=False)
    return text + "\n" if patched.endswith("\n") else text


changes = []


def record(path, action):
    # Only what the agent's patch did is tampering; bringing in the row's own version is not.
    if path in touched:
        changes.append({"path": to_stored(path), "action": action})


def restore(path):
    if path in gold_files:
        # A directory or symlink the patch put in its place goes first: checkout writes a plain file.
        if os.path.isdir(path) and not os.path.islink(path):
            subprocess.run(["rm", "-rf", "--", path], check=False)
        elif os.path.islink(path):
            os.unlink(path)
        git("checkout", "-q", gold, "--", ":(literal)" + path)
        record(path, "reset")
    elif os.path.lexists(path):
        if os.path.isdir(path) and not os.path.islink(path):
            subprocess.run(["rm", "-rf", "--", path], check=False)
        else:
            os.unlink(path)
        record(path, "removed")


def in_test_dir(path):
    return any(path.startswith(d) for d in test_dirs)


for path in sorted(touched | gold_diff):
    if path.startswith(".git/") or path == ".git":
        continue
    new = path not in gold_files
    if path in protect or is_whole(path) or path in plugin_files or path in config_files:
        restore(path)
    elif new and path in touched and (is_new_forbidden(path) or in_test_dir(path)):
        restore(path)
    elif sections_of(path) is not None:
        s = sections_of(path)
        try:
            with open(path, encoding="utf-8") as f:
                patched = f.read()
        except (OSError, UnicodeDecodeError):
            restore(path)
            continue
        if s["format"] == "json":
            try:
                fixed = splice_json(patched, gold_text(path), s["names"])
            except ValueError:
                # Not a JSON object (the patch broke it): the gold version whole.
                restore(path)
                continue
        else:
            splice = splice_ini if s["format"] == "ini" else splice_toml
            fixed = splice(patched, gold_text(path), s["names"])
        if fixed != patched:
            if os.path.islink(path):
                os.unlink(path)
            with open(path, "w", encoding="utf-8") as f:
                f.write(fixed)
            record(path, "sections")

print(json.dumps({"changes": changes}))

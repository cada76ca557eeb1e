"""Lay a PR's changed test definitions over an older commit's own test modules.

Run by checkout.sh (from the work tree, with the system python3: 3.9+) when the PR's test patch
(`git diff <base> <head>` of the test and support files) does not apply three-way at the commit
being probed, e.g. the PR edits a test that an earlier change rewrote or added:

    transplant_defs.py <base> <head> <file>...

Each file is patched on its own first (three-way); a Python file whose patch still conflicts gets the
definitions the PR added or changed: each changed method replaces the commit's own method of that
name in the same class, or joins the class at its end; a changed class the commit lacks, a function
or a module constant is replaced or added whole; each name the PR imports anew is imported on its own
and may be missing (a test that needs it then fails with NameError: another failure than the bug's,
which the bisection does not count). A file the commit lacks is the PR's whole file. Exit 0 when
every file was laid over; else 1 with one line on stderr naming the file and why.
"""
import ast
import os
import re
import subprocess
import sys

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class Failed(Exception):
    pass


ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def from_stored(name):
    """A file name as foresight stores it, as a path: a C-quoted one (a name that is not UTF-8, as git
    writes it: "tests/caf\\351.txt") back to its bytes (surrogateescape), any other as it is."""
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


def git(*args, stdin=None):
    return subprocess.run(["git", *args], input=stdin, capture_output=True, check=False)


def blob(rev, path):
    r = git("cat-file", "blob", f"{rev}:{path}")
    return r.stdout.decode("utf-8") if r.returncode == 0 else None


def start_of(node):
    return min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno]) - 1


def assigned_name(node):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


class Module:
    """A module's definitions by key: ("f",) top-level def or class, ("=x",) module constant,
    ("C", "m") a class member (method, nested class, class attribute as "=x")."""

    def __init__(self, src, path):
        try:
            self.tree = ast.parse(src)
        except SyntaxError as e:
            raise Failed(f"{path} does not parse here ({e.msg}, line {e.lineno})")
        self.lines = src.splitlines(keepends=True)
        if self.lines and not self.lines[-1].endswith("\n"):
            self.lines[-1] += "\n"
        self.spans = {}
        self.order = []
        self.classes = {}
        self.imports = []
        for node in self.tree.body:
            if isinstance(node, DEFS):
                self._add((node.name,), node)
                if isinstance(node, ast.ClassDef):
                    self.classes[node.name] = node
                    for sub in node.body:
                        if isinstance(sub, DEFS):
                            self._add((node.name, sub.name), sub)
                        elif assigned_name(sub):
                            self._add((node.name, "=" + assigned_name(sub)), sub)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.append(node)
            elif assigned_name(node):
                self._add(("=" + assigned_name(node),), node)

    def _add(self, key, node):
        self.spans[key] = (start_of(node), node.end_lineno, node.col_offset)
        self.order.append(key)

    def text(self, key):
        start, end, _ = self.spans[key]
        return "".join(self.lines[start:end])

    def imported(self):
        """(module, name, level) of every top-level import: name None for `import module`."""
        out = set()
        for node in self.imports:
            for alias in node.names:
                if isinstance(node, ast.Import):
                    out.add((alias.name, None, 0, alias.asname))
                else:
                    out.add((node.module or "", alias.name, node.level, alias.asname))
        return out

    def after_imports(self):
        """The line after the last top-level import (else after a docstring and __future__ lines)."""
        if self.imports:
            return max(n.end_lineno for n in self.imports)
        body = self.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            return body[0].end_lineno
        return 0


def reindent(text, have, want):
    if have == want:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith(" " * have):
            line = " " * want + line[have:]
        out.append(line)
    return "".join(out)


def import_line(module, name, level, asname):
    alias = f" as {asname}" if asname else ""
    if name is None:
        stmt = f"import {module}{alias}"
    else:
        stmt = f"from {'.' * level}{module} import {name}{alias}"
    return f"try:\n    {stmt}\nexcept ImportError:\n    pass\n"


def merge(path, base_src, head_src, own_src):
    """own_src with the definitions head changed from base laid over it; and what was laid."""
    base = Module(base_src, f"{path} at the PR's base") if base_src is not None else None
    head = Module(head_src, f"{path} at the PR's head")
    own = Module(own_src, path)

    def changed(key):
        return base is None or key not in base.spans or base.text(key) != head.text(key)

    edits = []  # (line, seq, end, text): replace own.lines[line:end] by text
    done = []
    for seq, key in enumerate(head.order):
        if not changed(key):
            continue
        if len(key) == 2 and key[0] not in own.classes:
            continue  # the whole class is added below
        if len(key) == 1 and key[0] in head.classes and key[0] in own.classes:
            continue  # a class both have: its members, one by one
        _, _, head_col = head.spans[key]
        text = head.text(key)
        if key in own.spans:
            start, end, col = own.spans[key]
            edits.append((start, seq, end, reindent(text, head_col, col)))
            done.append("replaced " + ".".join(key))
        elif len(key) == 2:
            cls = own.classes[key[0]]
            col = cls.body[0].col_offset
            edits.append((cls.end_lineno, seq, cls.end_lineno, "\n" + reindent(text, head_col, col)))
            done.append("added " + ".".join(key))
        elif key[0].startswith("="):
            at = own.after_imports()
            edits.append((at, seq, at, text))
            done.append("added " + key[0][1:])
        else:
            at = len(own.lines)
            edits.append((at, seq, at, "\n\n" + text))
            done.append("added " + key[0])
    had = own.imported()
    base_imports = base.imported() if base else set()
    new = sorted(i for i in head.imported() - base_imports if i not in had)
    if new:
        at = own.after_imports()
        edits.append((at, -1, at, "".join(import_line(*i) for i in new)))
        done.append(f"imported {len(new)} name(s)")
    lines = list(own.lines)
    # Bottom up, so earlier line numbers still hold; at one line a replacement first, then the
    # insertions before it, in the head's order.
    for start, _, end, text in sorted(edits, key=lambda e: (e[0], e[2] > e[0], e[1]), reverse=True):
        lines[start:end] = [text]
    out = "".join(lines)
    try:
        ast.parse(out)
    except SyntaxError as e:
        raise Failed(f"{path}: the merged definitions do not parse ({e.msg}, line {e.lineno})")
    return out, done


def lay(base, head, path):
    head_src = blob(head, path)
    if head_src is None:
        return None  # the PR deleted it: nothing of it to lay over
    base_src = blob(base, path)
    if head_src == base_src:
        return None
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(head_src)
        return "the PR's whole file"
    patch = git("--literal-pathspecs", "diff", "--full-index", "--binary", base, head, "--", path).stdout
    if git("apply", "--3way", stdin=patch).returncode == 0:
        return "patched"
    # A failed three-way apply leaves conflict markers and unmerged entries: back to the commit's own.
    git("--literal-pathspecs", "checkout", "-qf", "HEAD", "--", path)
    if not path.endswith(".py"):
        raise Failed(f"{path}: the PR's changes do not apply here and it is no Python module")
    with open(path, encoding="utf-8") as f:
        own_src = f.read()
    out, done = merge(path, base_src, head_src, own_src)
    with open(path, "w", encoding="utf-8") as f:
        f.write(out)
    return ", ".join(done) or "nothing changed"


def main(argv):
    if len(argv) < 3:
        print("usage: transplant_defs.py <base> <head> <file>...", file=sys.stderr)
        return 2
    base, head, *files = argv
    files += [from_stored(f) for f in os.environ.get("FORESIGHT_OVERLAY_FILES", "").splitlines() if f]
    seen = set()
    for path in files:
        if path in seen:
            continue
        seen.add(path)
        try:
            what = lay(base, head, path)
        except (Failed, UnicodeDecodeError, OSError) as e:
            print(f"transplant: {e}", file=sys.stderr)
            return 1
        if what:
            print(f"transplant: {path}: {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

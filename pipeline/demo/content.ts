/**
 * File contents of the demo `minilib` package built by pipeline/demo/make-demo-repo.ts.
 *
 * Python modules are assembled from blocks (one per function or test) so that
 * every version of a file differs from the previous one by exactly the block a
 * commit adds, removes or changes. Python text lives in String.raw literals so
 * backslashes (regexes, "\t") reach the files unchanged.
 */

/** Join blocks with two blank lines between them (PEP 8), ending in one newline. */
export function pyFile(...blocks: string[]): string {
  return blocks.map((b) => b.replace(/^\n+/, '').trimEnd()).join('\n\n\n') + '\n';
}

/** Strip the leading newline of a template literal; end with exactly one newline. */
function text(s: string): string {
  return s.replace(/^\n+/, '').trimEnd() + '\n';
}

// ---------------------------------------------------------------- project files

export const gitignore = text(`
__pycache__/
*.pyc
.pytest_cache/
`);

export const pyproject = (version: string): string =>
  text(`
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "minilib"
version = "${version}"
description = "Small dependency-free Python helpers"
requires-python = ">=3.8"

[tool.pytest.ini_options]
pythonpath = ["."]
testpaths = ["tests"]
`);

const readmeIntro = `
# minilib

Small, dependency-free Python helpers for text, numbers and durations.
`;

const readmeUsage = `
## Usage

~~~python
import minilib.text as text

text.normalize_space("  hello   world ")  # "hello world"
text.slugify("Hello World")               # "hello-world"
~~~
`;

const readmeDevelopment = `
## Development

Run the tests from the repository root:

~~~sh
python3 -m pytest
~~~
`;

export const readme = text(readmeIntro + readmeDevelopment);
export const readmeWithUsage = text(readmeIntro + readmeUsage + readmeDevelopment);

export const contributing = text(`
# Contributing

1. Fork the repository and create a branch named after yourself and the change.
2. Add a test for every behaviour you add or fix.
3. Run \`python3 -m pytest\` and make sure it passes.
4. Open a pull request with a short description of the change.
`);

// ---------------------------------------------------------------- minilib/__init__.py

export const init = (version: string): string =>
  pyFile(String.raw`
"""minilib: small pure-Python helpers."""

__version__ = "${version}"
`);

export const initWithExports = (version: string): string =>
  pyFile(String.raw`
"""minilib: small pure-Python helpers."""

from minilib.timeparse import parse_duration

__version__ = "${version}"

__all__ = ["parse_duration"]
`);

// ---------------------------------------------------------------- minilib/text.py

export const textHeader = String.raw`
"""Text helpers."""
`;

export const normalizeSpace = String.raw`
def normalize_space(s):
    """Collapse runs of whitespace into single spaces and strip both ends."""
    return " ".join(s.split())
`;

export const slugifyV1 = String.raw`
def slugify(value):
    """Turn a title into a URL slug."""
    words = value.lower().split(" ")
    return "-".join(words)
`;

export const slugifyV2 = String.raw`
def slugify(value):
    """Turn a title into a URL slug."""
    words = value.lower().split()
    return "-".join(words)
`;

export const wordCount = String.raw`
def word_count(s):
    """Count the whitespace-separated words in s."""
    return len(s.split())
`;

// ---------------------------------------------------------------- tests/test_text.py

export const testTextHeader = String.raw`
import random

import pytest

import minilib.text as text
`;

export const testNormalizeSpace = String.raw`
def test_normalize_space():
    assert text.normalize_space("  hello   world  ") == "hello world"


def test_normalize_space_tabs():
    assert text.normalize_space("a\tb\n  c") == "a b c"


def test_normalize_space_random_input():
    # Deliberately flaky: fails about half the time, whatever the code does.
    # It exists so tools that replay tests have a flaky test to detect.
    rng = random.SystemRandom()
    words = ["w%d" % i for i in range(rng.randint(1, 5))]
    spaced = "".join(" " * rng.randint(1, 3) + w for w in words)
    assert text.normalize_space(spaced) == " ".join(words)
    if rng.random() < 0.5:
        pytest.fail("deliberately flaky test: failed at random (expected about half the time)")
`;

export const testSlugifyBasic = String.raw`
def test_slugify_basic():
    assert text.slugify("Hello World") == "hello-world"
`;

export const testWordCount = String.raw`
def test_word_count():
    assert text.word_count("one two  three") == 3
    assert text.word_count("") == 0
`;

export const testSlugifyCollapsesWhitespace = String.raw`
def test_slugify_collapses_whitespace():
    assert text.slugify("a  b") == "a-b"
    assert text.slugify(" Hello  World ") == "hello-world"
`;

// ---------------------------------------------------------------- minilib/numbers.py

export const numbersHeader = String.raw`
"""Number helpers."""
`;

export const isEven = String.raw`
def is_even(n):
    """Return True when n is divisible by two."""
    return n % 2 == 0
`;

export const formatBytesV1 = String.raw`
def format_bytes(n):
    """Human-readable size with SI units."""
    for unit in ["B", "KB", "MB", "GB"]:
        if n < 1000:
            return f"{n:.0f} {unit}"
        n /= 1000
    return f"{n:.0f} TB"
`;

export const formatBytesV2 = String.raw`
def format_bytes(n, binary=False):
    """Human-readable size with SI units, or IEC units when binary=True."""
    base = 1024 if binary else 1000
    units = ["B", "KiB", "MiB", "GiB", "TiB"] if binary else ["B", "KB", "MB", "GB", "TB"]
    for unit in units[:-1]:
        if n < base:
            return f"{n:.0f} {unit}"
        n /= base
    return f"{n:.0f} {units[-1]}"
`;

export const clampV1 = String.raw`
def clamp(value, low, high):
    """Limit value to the closed range [low, high]."""
    return max(low, min(value, high))
`;

export const clampInt = String.raw`
def clamp(value, low, high):
    """Limit value to the closed range [low, high]."""
    return int(max(low, min(value, high)))
`;

// ---------------------------------------------------------------- tests/test_numbers.py

export const testNumbersHeader = String.raw`
import minilib.numbers as numbers
`;

export const testIsEven = String.raw`
def test_is_even():
    assert numbers.is_even(4)
    assert not numbers.is_even(7)
`;

export const testFormatBytes = String.raw`
def test_format_bytes():
    assert numbers.format_bytes(999) == "999 B"
    assert numbers.format_bytes(2000) == "2 KB"
    assert numbers.format_bytes(3_000_000) == "3 MB"
`;

export const testClamp = String.raw`
def test_clamp():
    assert numbers.clamp(5, 0, 3) == 3
    assert numbers.clamp(-1, 0, 3) == 0
    assert numbers.clamp(2, 0, 3) == 2
`;

export const testClampKeepsFloats = String.raw`
def test_clamp_keeps_floats():
    assert numbers.clamp(0.5, 0, 1) == 0.5
`;

export const testFormatBytesBinary = String.raw`
def test_format_bytes_binary():
    assert numbers.format_bytes(2048, binary=True) == "2 KiB"
    assert numbers.format_bytes(3 * 1024 * 1024, binary=True) == "3 MiB"
    assert numbers.format_bytes(2048) == "2 KB"
`;

// ---------------------------------------------------------------- minilib/timeparse.py

export const timeparseV1 = pyFile(
  String.raw`
import re

_PART = re.compile(r"(\d+)([hms])")
_SECONDS = {"h": 3600, "m": 60, "s": 1}
`,
  String.raw`
def parse_duration(text):
    """Parse "1h30m" style durations into seconds."""
    total = 0
    for amount, unit in _PART.findall(text):
        total += int(amount) * _SECONDS[unit]
    return total
`,
);

export const timeparseV2 = pyFile(
  String.raw`
import re

_PART = re.compile(r"(\d+)([hms])", re.IGNORECASE)
_SECONDS = {"h": 3600, "m": 60, "s": 1}
`,
  String.raw`
def parse_duration(text):
    """Parse "1h30m" style durations into seconds."""
    total = 0
    for amount, unit in _PART.findall(text):
        total += int(amount) * _SECONDS[unit.lower()]
    return total
`,
);

// ---------------------------------------------------------------- tests/test_timeparse.py

export const testTimeparseHeader = String.raw`
from minilib.timeparse import parse_duration
`;

export const testParseBasic = String.raw`
def test_parse_hours_minutes():
    assert parse_duration("1h30m") == 5400


def test_parse_seconds():
    assert parse_duration("45s") == 45
`;

export const testParseUppercaseUnits = String.raw`
def test_parse_uppercase_units():
    assert parse_duration("2H") == 7200
    assert parse_duration("1H30M") == 5400
`;

// ---------------------------------------------------------------- tests/test_package.py

export const testPackageHeader = String.raw`
import minilib
`;

export const testVersion = String.raw`
def test_version():
    assert isinstance(minilib.__version__, str)
`;

export const testExportsParseDuration = String.raw`
def test_exports_parse_duration():
    assert minilib.parse_duration("2m") == 120
    assert "parse_duration" in minilib.__all__
`;

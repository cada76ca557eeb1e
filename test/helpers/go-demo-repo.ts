/**
 * A Go module in the demo's style (pipeline/demo/make-demo-repo.ts): squash-merged PRs on main, one
 * fix-chain planted, no third-party modules, the same shas on every machine.
 *
 *   #1 Slugify          -> #3 runs of whitespace gave empty segments ("Regression in #1")
 *   #2 Clamp            (no fix)
 *
 * PR1 adds its test to an existing file (text/text_test.go): at pr1_base that file does not compile, as
 * a feature's tests do not before the feature.
 *
 * `{ newerStd: true }`: the code calls the standard library's `cmp.Or` (Go 1.22) while go.mod still says
 * `go 1.19`, as projects forget to raise it: the first toolchain detected (1.21, the newest released by
 * the history's dates, January 2024) cannot build it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DemoRepo, isolatedEnv, type Person } from '../../pipeline/demo/demo-git.ts';

const ALICE: Person = { name: 'Alice Maintainer', email: 'alice@example.com' };
const DAVE: Person = { name: 'Dave Kim', email: 'dave@example.com' };
const GRACE: Person = { name: 'Grace Liu', email: 'grace@example.com' };

const goFile = (pkg: string, imports: readonly string[], ...blocks: string[]): string =>
  [`package ${pkg}\n`, ...(imports.length ? [`import (\n${imports.map((i) => `\t"${i}"`).join('\n')}\n)\n`] : []), ...blocks].join('\n');

const normalizeSpace = `// NormalizeSpace collapses runs of whitespace into one space and trims the ends.
func NormalizeSpace(s string) string {
\treturn strings.Join(strings.Fields(s), " ")
}
`;
const slugifyV1 = `// Slugify lowercases a title and joins its words with hyphens, for URLs.
func Slugify(s string) string {
\treturn strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "-")
}
`;
const slugifyV2 = `// Slugify lowercases a title and joins its words with hyphens, for URLs.
func Slugify(s string) string {
\treturn strings.Join(strings.Fields(strings.ToLower(s)), "-")
}
`;
const testNormalizeSpace = `func TestNormalizeSpace(t *testing.T) {
\tif got := NormalizeSpace("  a \\t b  "); got != "a b" {
\t\tt.Fatalf("NormalizeSpace = %q, want %q", got, "a b")
\t}
}
`;
const testSlugifyBasic = `func TestSlugifyBasic(t *testing.T) {
\tfor in, want := range map[string]string{"Hello World": "hello-world", "Go": "go"} {
\t\tt.Run(in, func(t *testing.T) {
\t\t\tif got := Slugify(in); got != want {
\t\t\t\tt.Fatalf("Slugify(%q) = %q, want %q", in, got, want)
\t\t\t}
\t\t})
\t}
}
`;
const testSlugifyWhitespace = `func TestSlugifyCollapsesWhitespace(t *testing.T) {
\tif got := Slugify("a  b\\tc"); got != "a-b-c" {
\t\tt.Fatalf("Slugify = %q, want %q", got, "a-b-c")
\t}
}
`;
const firstWord = `// FirstWord is the first word of s, or def when s has none.
func FirstWord(s, def string) string {
\tw := ""
\tif f := strings.Fields(s); len(f) > 0 {
\t\tw = f[0]
\t}
\treturn cmp.Or(w, def)
}
`;
const clamp = `// Clamp limits v to the closed range [lo, hi].
func Clamp(v, lo, hi int) int {
\tif v < lo {
\t\treturn lo
\t}
\tif v > hi {
\t\treturn hi
\t}
\treturn v
}
`;
const testClamp = `func TestClamp(t *testing.T) {
\tif Clamp(5, 0, 3) != 3 || Clamp(-1, 0, 3) != 0 || Clamp(2, 0, 3) != 2 {
\t\tt.Fatal("Clamp is wrong")
\t}
}
`;

/** Build the module's history in `dir` (created); resolves to the head sha. */
export async function makeGoDemoRepo(dir: string, opts: { newerStd?: boolean } = {}): Promise<{ head: string }> {
  const home = await mkdtemp(join(tmpdir(), 'go-demo-home-'));
  try {
    const repo = new DemoRepo(dir, isolatedEnv(home));
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    await repo.git(['init', '--quiet', '-b', 'main', `--template=${home}`]);
    const textGo = 'text/text.go';
    const textTest = 'text/text_test.go';
    await repo.commit({
      message: 'Initial commit',
      author: ALICE,
      files: {
        'go.mod': 'module example.com/gotext\n\ngo 1.19\n',
        'README.md': '# gotext\n\nSmall text helpers.\n',
        [textGo]: goFile('text', ['strings'], normalizeSpace),
        ...(opts.newerStd ? { 'text/words.go': goFile('text', ['cmp', 'strings'], firstWord) } : {}),
        [textTest]: goFile('text', ['testing'], testNormalizeSpace),
      },
    });
    await repo.squashPr({
      author: DAVE,
      subject: 'Add Slugify helper (#1)',
      body: 'Slugify() lowercases a title and joins its words with hyphens, for use in URLs.',
      files: { [textGo]: goFile('text', ['strings'], normalizeSpace, slugifyV1), [textTest]: goFile('text', ['testing'], testNormalizeSpace, testSlugifyBasic) },
    });
    await repo.squashPr({
      author: GRACE,
      subject: 'Add Clamp helper (#2)',
      body: 'Clamp() limits a value to a closed range.',
      files: { 'num/num.go': goFile('num', [], clamp), 'num/num_test.go': goFile('num', ['testing'], testClamp) },
    });
    await repo.squashPr({
      author: GRACE,
      subject: 'Fix Slugify producing empty segments (#3)',
      body: 'Regression in #1: "a  b" became "a--b".',
      files: {
        [textGo]: goFile('text', ['strings'], normalizeSpace, slugifyV2),
        [textTest]: goFile('text', ['testing'], testNormalizeSpace, testSlugifyBasic, testSlugifyWhitespace),
      },
    });
    return { head: await repo.git(['rev-parse', 'HEAD']) };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Which Go toolchain a commit's go.mod gets, the install candidates of a Go module, and the apt step that
 * installs a toolchain from a backports suite of the base image's own mirror.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StateRun } from '../../../core/env/index.ts';
import { outgrownEnvironment } from '../../../core/env/runners/evidence.ts';
import { goRunner } from '../../../core/env/runners/go/index.ts';
import { aptScript } from '../../../core/env/image/build-scripts.ts';
import { goModVersion, goOrder } from '../../../core/env/recipes/go-era.ts';

describe('go-era', () => {
  it('reads the toolchain line before the go line, and ignores comments and other modules', () => {
    expect(goModVersion('module x\n\ngo 1.21\n')).toBe('1.21');
    expect(goModVersion('module x\n\ngo 1.21.3\ntoolchain go1.22.5\n')).toBe('1.22');
    expect(goModVersion('module x\n// go 1.30\ngo 1.16 // old\n')).toBe('1.16');
    expect(goModVersion('module x\nrequire golang.org/x/go 1.2.3\n')).toBeNull();
  });

  it('tries the oldest toolchain that is enough first, then the newer; more than the newest gets the newest', () => {
    expect(goOrder('1.16')).toEqual(['1.19', '1.21', '1.22', '1.23', '1.24']);
    expect(goOrder('1.19')[0]).toBe('1.19');
    expect(goOrder('1.12')[0]).toBe('1.15');
    expect(goOrder('1.30')).toEqual(['1.24']);
    expect(goOrder(null)[0]).toBe('1.24');
  });

  it('installs a backports toolchain from the base image mirror, and links it onto PATH', () => {
    const apt = aptScript({ systemPackages: [], go: '1.22' })!;
    expect(apt).toContain(`awk '/^deb / {print $2; exit}' /etc/apt/sources.list`);
    expect(apt).toContain('echo "deb $mirror bookworm-backports main" >/etc/apt/sources.list.d/foresight-bookworm-backports.list');
    expect(apt).toContain("apt-get install -y -q --no-install-recommends 'golang-1.22-go/bookworm-backports'");
    expect(apt).toContain('ln -sf /usr/lib/go-1.22/bin/go /usr/lib/go-1.22/bin/gofmt /usr/local/bin/');
    // A release's own toolchain needs no extra suite.
    expect(aptScript({ systemPackages: [], go: '1.19' })!).not.toContain('sources.list.d');
    expect(aptScript({ systemPackages: [] })).toBeNull();
  });
});

describe('go-era by date and by build constraint', () => {
  it("prefers the newest toolchain released by the commit's date (a go line is a floor), then newer, then older", () => {
    expect(goOrder('1.14', '2024-09-01T00:00:00Z')).toEqual(['1.23', '1.24', '1.22', '1.21', '1.19', '1.15']);
    expect(goOrder('1.19', '2024-01-02T10:00:00Z')).toEqual(['1.21', '1.22', '1.23', '1.24', '1.19']);
    // Before every toolchain that is enough: the oldest of them first.
    expect(goOrder('1.21', '2020-01-01')).toEqual(['1.21', '1.22', '1.23', '1.24']);
  });

  it('a test file asking a newer Go (//go:build) than the toolchain outgrows it: the caller moves to the next candidate', () => {
    const run = { kind: 'report', exitCode: 1, durationMs: 1, outputTail: 'ok\nrun_state: mux_test.go needs go1.22 (//go:build), the toolchain is go1.21\n', parsed: { tests: {}, collectionErrors: [] } } as unknown as StateRun;
    expect(outgrownEnvironment(run, goRunner.exitCodes)).toBe('run_state: mux_test.go needs go1.22 (//go:build), the toolchain is go1.21');
  });

  it("go 1.22/1.23's build failure wrapped in an output event stays the plain line the parser reads as a collection error", () => {
    const events = fileURLToPath(new URL('../../../core/env/runners/go/events.awk', import.meta.url));
    const line = '{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"example.com/m/text","Output":"FAIL\\texample.com/m/text [build failed]\\n"}\n';
    const out = execFileSync('awk', ['-f', events], { input: line, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] });
    expect(out).toBe('FAIL\texample.com/m/text [build failed]\n');
  });
});

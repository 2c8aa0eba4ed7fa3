#!/usr/bin/env python3
"""Runs the task guides (docs/guides/*.md) as written, where they can run here.

Every shell block (```sh, bash, shell, console) in a guide follows, as the
last non-blank lines before its fence, one of these markers:

  <!-- guide: run -->            run here, as written (exit status 0)
  <!-- guide: run, exit N -->    run here; it must exit N (doctor's FAIL is 1)
  <!-- guide: not run: WHY -->   cannot run here (no systemd, no API server,
                                 no GPU Operator, no Helm, no CRI-O engine);
                                 the reader sees it too: the text between the
                                 previous block and this one says "Not run
                                 here: WHY". A checked-against-files marker
                                 beside it (README's scheme, tests/readme/)
                                 names the test that covers the step, where
                                 one does.

Every package path a guide names (/usr/share/oci-rlimit/..., prose and
blocks alike) must be one the package installs, and every task guide has a
heading "Undo" or "Uninstall".

A ```text block right after a run block, marked <!-- guide: output -->, is
"what you should see": each of its non-blank lines must be in that step's
output (stdout and stderr), where "..." stands for any text.

Each guide runs in a private mount namespace whose /etc, /usr, /var and /opt
are overlays over this machine's and whose /run is empty (nothing reaches the
host, and no container of the machine's shows), with the
package installed there as the .deb installs it (`cmake --install BUILD
--prefix /usr`: the same install rules CPack uses). Its blocks run in order,
each in its own `bash -euo pipefail`, in one working directory.

  guides_test.py SOURCE_DIR BUILD_DIR [GUIDE.md...]
Exit 77 (skip) when not root: the overlays need it.
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^\s*```(sh|bash|shell|console|text)?\s*$")
MARKER = re.compile(r"^\s*<!-- (guide: [^>]*|checked-against-files: .*) -->\s*$")
RUN = re.compile(r"^guide: run(?:, exit (\d+))?$")
NOT_RUN = re.compile(r"^guide: not run: (.+)$")
SHELL = {"sh", "bash", "shell", "console"}

SETUP = r"""
set -euo pipefail
stage=$1 build=$2
for d in etc usr var opt; do
  mkdir -p "$stage/$d.up" "$stage/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$stage/$d.up,workdir=$stage/$d.work" "/$d"
done
# A node's /run without the machine's own containers and sockets: audit and
# doctor see this node only.
mount -t tmpfs -o mode=0755 tmpfs /run
cmake --install "$build" --prefix /usr >"$stage/install.log" 2>&1 ||
  { cat "$stage/install.log" >&2; exit 1; }
shift 2
for step in "$@"; do
  (cd "$stage/work" && bash -euo pipefail "$step.sh" >"$step.out" 2>&1; echo $? >"$step.rc") || true
done
"""


PACKAGE_PATH = re.compile(r"/usr/(?:share/oci-rlimit|share/doc/oci-rlimit|lib/oci-rlimit)(?:/[\w.-]+)*")
COMMENT = re.compile(r"<!--.*?-->", re.S)


class Block:
    def __init__(self, line, kind, body, markers, before):
        self.line, self.kind, self.body, self.markers = line, kind, body, markers
        # What a reader sees between the previous block and this one.
        self.before = " ".join(COMMENT.sub("", "\n".join(before)).split())


def parse(path):
    """The fenced blocks of a guide, each with the markers right before it."""
    blocks, markers, in_block, prose = [], [], None, []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if in_block is not None:
            if line.strip() == "```":
                blocks.append(in_block)
                in_block, prose = None, []
            else:
                in_block.body.append(line)
            continue
        fence = FENCE.match(line)
        if fence:
            in_block = Block(n, fence.group(1) or "", [], markers, prose)
            markers = []
            continue
        prose.append(line)
        m = MARKER.match(line)
        if m:
            markers.append(m.group(1))
        elif line.strip():
            markers = []
    return blocks


def check_covered(src, block, fail):
    """README's checked-against-files marker: FILE TEST... | KEY..."""
    for m in block.markers:
        if not m.startswith("checked-against-files: "):
            continue
        parts = m[len("checked-against-files: "):].split(" | ")
        file_and_tests = parts[0].split()
        if len(file_and_tests) < 2 or len(parts) < 2:
            fail(block.line, "a checked-against-files marker needs FILE TEST... | KEY")
            continue
        path = os.path.join(src, file_and_tests[0])
        if not os.path.isfile(path):
            fail(block.line, f"{file_and_tests[0]} does not exist")
            continue
        text = open(path, encoding="utf-8").read()
        for test in file_and_tests[1:]:
            if f", {test})" not in text:
                fail(block.line, f"{file_and_tests[0]} has no test {test}")
        body = "\n".join(block.body)
        for key in parts[1:]:
            if key not in body:
                fail(block.line, f'the block lost "{key}" (its marker\'s KEY)')
            if key not in text:
                fail(block.line, f'{file_and_tests[0]} does not hold "{key}"')


def plan(src, guide, fail):
    """(steps to run, steps not run): each run step is (block, exit, expected lines)."""
    steps, skipped = [], []
    blocks = parse(guide)
    for i, b in enumerate(blocks):
        if b.kind not in SHELL:
            continue
        verdicts = [m for m in b.markers if m.startswith("guide: ")]
        if len(verdicts) != 1:
            fail(b.line, "a shell block needs one <!-- guide: run --> or <!-- guide: not run: WHY -->")
            continue
        run, not_run = RUN.match(verdicts[0]), NOT_RUN.match(verdicts[0])
        if not_run:
            if f"not run here: {not_run.group(1)}".lower() not in b.before.lower():
                fail(b.line, f'the text before the block must say "Not run here: {not_run.group(1)}"')
            check_covered(src, b, fail)
            skipped.append((b, not_run.group(1)))
            continue
        if not run:
            fail(b.line, f"unknown marker <!-- {verdicts[0]} -->")
            continue
        expected = []
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if nxt and nxt.kind == "text" and "guide: output" in nxt.markers:
            expected = [l.strip() for l in nxt.body if l.strip()]
        steps.append((b, int(run.group(1) or 0), expected))
    return steps, skipped


def seen(expected, output):
    pattern = ".*".join(re.escape(part.strip()) for part in expected.split("..."))
    return re.search(pattern, output) is not None


def run_guide(src, build, guide, steps, fail):
    with tempfile.TemporaryDirectory(prefix="oci-rlimit-guide.") as stage:
        os.mkdir(os.path.join(stage, "work"))
        names = []
        for n, (block, _, _) in enumerate(steps):
            name = os.path.join(stage, f"step{n}")
            with open(name + ".sh", "w", encoding="utf-8") as f:
                f.write("\n".join(block.body) + "\n")
            names.append(name)
        env = dict(os.environ, PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c", SETUP,
                            "setup", stage, build] + names,
                           capture_output=True, text=True, env=env, check=False)
        if r.returncode != 0:
            fail(0, f"setup failed: {r.stderr.strip()}")
            return set()
        # cmake --install names each file it installs ("-- Installing: PATH", "-- Up-to-date: PATH").
        installed = set()
        with open(os.path.join(stage, "install.log"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^-- (?:Installing|Up-to-date): (\S+)$", line.strip())
                path = m.group(1) if m else ""
                while path not in ("", "/"):
                    installed.add(path)
                    path = os.path.dirname(path)
        for name, (block, want_rc, expected) in zip(names, steps):
            out = open(name + ".out", encoding="utf-8", errors="replace").read()
            rc = int(open(name + ".rc", encoding="utf-8").read().strip() or -1)
            if rc != want_rc:
                fail(block.line, f"exit {rc}, want {want_rc}; output:\n{out}")
            for line in expected:
                if not seen(line, out):
                    fail(block.line, f'output lacks "{line}"; output:\n{out}')
        return installed


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: guides_test.py SOURCE_DIR BUILD_DIR [GUIDE.md...]")
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    guides = sys.argv[3:] or sorted(
        os.path.join(src, "docs/guides", g)
        for g in os.listdir(os.path.join(src, "docs/guides")) if g.endswith(".md"))
    if os.geteuid() != 0:
        print("guides_test: skipped: the overlays need root")
        sys.exit(77)
    failures, installed, named = 0, set(), []
    for guide in guides:
        rel = os.path.relpath(guide, src)

        def fail(line, why, rel=rel):
            nonlocal failures
            failures += 1
            print(f"guides_test: FAIL: {rel}:{line}: {why}", file=sys.stderr)

        steps, skipped = plan(src, guide, fail)
        if os.path.basename(guide) != "README.md" and not any(
                re.match(r"^#+ (Undo|Uninstall)\b", line) for line in open(guide, encoding="utf-8")):
            fail(0, 'no "Undo" or "Uninstall" section')
        if steps:
            installed |= run_guide(src, build, guide, steps, fail)
        with open(guide, encoding="utf-8") as f:
            named += [(fail, p.rstrip(".").rstrip("/")) for p in PACKAGE_PATH.findall(f.read())]
        print(f"guides_test: {rel}: {len(steps)} step(s) run, {len(skipped)} not run here"
              + "".join(f"\n  not run (line {b.line}): {why}" for b, why in skipped))
    for fail, path in named:
        if installed and path not in installed:
            fail(0, f"{path} is named but the package does not install it")
    print(f"guides_test: {len(guides)} guide(s), {len(named)} package path(s), {failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

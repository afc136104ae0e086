#!/usr/bin/env python3
"""Every shell command shown in README.md and the task guides (docs/guide-*.md) runs.

The ```sh blocks of those pages are what users copy. This test runs them, so that they stay
true as the code changes:

  ```sh          every command runs as written, one at a time, in a scratch folder laid out
                 like a checkout (build/feedbench is the binary under test, configs/ a copy of
                 the repository's), and must exit 0; `make` and `git` commands are not run
                 (make test runs this test; a test must not commit)
  ```sh long     too long for `make test` (or `make` itself), and
  ```sh cluster  needs a cluster (srun, module, lfs) or the lab (tests/lab/lab.sh): the feedbench
                 part of each command is checked instead, `run`/`generate`/`search`/`mlperf run`
                 as `validate` with the same config
                 and --set values, `sweep` with --dry-run; the other commands (make, srun
                 itself, compare or baseline over the results of those runs) are not run

A command in a plain ```sh block may not hold a placeholder (`<run>`, `...`): mark its block.
docs/guide-ci.md's blocks are the CI recipe that compare.readme_snippets runs (baseline, two
pipelines); here they are checked as `long`. Prints what ran, what was checked and what was
not run, and exits 1 on the first command that fails.

usage: commands.py   (environment: FEEDBENCH, FEEDBENCH_SOURCE_DIR)
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^\s*```(\S*)\s*(.*?)\s*$")
PLACEHOLDER = re.compile(r"<[a-z][^>]*>|\.\.\.")
NOT_RUN = ("make ", "git ")
# Flags of run/sweep/search that validate does not take, with the number of values they have.
DROP = {"--output": 1, "--quiet": 0, "--resume": 1, "--strict": 0, "--dry-run": 0, "--runs": 1,
        "--seed": 1}


def fail(msg):
    print("FAIL (docs.commands): " + msg, file=sys.stderr)
    sys.exit(1)


def blocks(path):
    """(line number, mode, [commands]) of each sh block; continuation lines joined, comments
    and blank lines dropped."""
    out, mode, cmds, cur, start = [], None, [], "", 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        m = FENCE.match(line)
        if m and mode is None:
            lang, attr = m.group(1), m.group(2)
            if lang in ("sh", "bash", "shell", "console"):
                mode = attr or "run"
                if mode not in ("run", "long", "cluster"):
                    fail(f"{path}:{n}: unknown block attribute '{attr}' (long, cluster)")
                cmds, cur, start = [], "", n
            elif lang:
                mode = "other"
            else:
                mode = "other"
            continue
        if m and mode is not None and not m.group(1):
            if mode != "other":
                out.append((start, mode, cmds))
            mode = None
            continue
        if mode in (None, "other"):
            continue
        text = line.rstrip("\n").strip()
        text = re.sub(r"(^|\s)#\s.*$", "", text) if not text.startswith("#!") else ""
        if text.endswith("\\"):
            cur += text[:-1] + " "
            continue
        text = (cur + text).strip()
        cur = ""
        if text:
            cmds.append(text)
    if mode is not None:
        fail(f"{path}: a block opened at line {start} is never closed")
    return out


def check_form(cmd):
    """The feedbench part of a command as a check that runs on this machine, or None."""
    i = cmd.find("build/feedbench ")
    if i < 0:
        return None
    part = re.split(r"\s*(?:;|&&|\|\||\|)\s*", cmd[i:])[0]
    words = shlex.split(os.path.expandvars(part))
    if len(words) < 2:
        return None
    sub, rest = words[1], words[2:]
    if sub == "mlperf" and rest[:1] == ["run"]:  # mlperf run CONFIG: validated as run's
        sub, rest = "run", [w for w in rest[1:] if w != "--split"]
    args, skip = [], 0
    for w in rest:
        if skip:
            skip -= 1
            continue
        if w in DROP:
            skip = DROP[w]
            continue
        args.append(w)
    if sub in ("run", "generate", "search"):
        return ["build/feedbench", "validate"] + args
    if sub == "sweep":
        return ["build/feedbench", "sweep"] + args + ["--dry-run"]
    if sub == "validate":
        return ["build/feedbench", sub] + args
    return None  # baseline, compare, plot, history: they read the results of the runs above


def main():
    fb = os.environ["FEEDBENCH"]
    src = os.environ["FEEDBENCH_SOURCE_DIR"]
    os.environ.setdefault("USER", "feedbench")
    pages = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "guide-*.md")))
    if len(pages) < 5:
        fail(f"expected README.md and four guides, found {pages}")
    tmp = tempfile.mkdtemp(prefix="fb_docs_", dir=os.environ.get("FEEDBENCH_BUILD_DIR"))
    ran = checked = skipped = 0
    try:
        for page in pages:
            rel = os.path.relpath(page, src)
            found = blocks(page)
            if not found:
                fail(f"{rel}: no sh block")
            # Each page starts from a fresh checkout: its commands build on each other only.
            work = os.path.join(tmp, os.path.basename(page)[:-3])
            os.makedirs(os.path.join(work, "build"))
            os.symlink(fb, os.path.join(work, "build", "feedbench"))
            shutil.copytree(os.path.join(src, "configs"), os.path.join(work, "configs"))
            for start, mode, cmds in found:
                if rel == os.path.join("docs", "guide-ci.md") and mode == "run":
                    mode = "long"  # run as written by compare.readme_snippets
                for cmd in cmds:
                    where = f"{rel}:{start}"
                    if mode == "run" and not cmd.startswith(NOT_RUN):
                        if PLACEHOLDER.search(cmd):
                            fail(f"{where}: '{cmd}' has a placeholder: mark the block long or cluster")
                        argv = ["bash", "-c", cmd]
                        kind = "ran"
                    else:
                        form = None if cmd.startswith(NOT_RUN) else check_form(cmd)
                        if form is None:
                            print(f"not run ({mode}): {where}: {cmd}", flush=True)
                            skipped += 1
                            continue
                        argv = form
                        kind = "checked"
                    try:
                        p = subprocess.run(argv, cwd=work, capture_output=True, text=True,
                                           timeout=120)
                    except subprocess.TimeoutExpired:
                        fail(f"{where}: '{' '.join(argv)}' ran over 120 s: mark the block long")
                    if p.returncode != 0:
                        fail(f"{where}: '{' '.join(argv)}' exited {p.returncode}:\n"
                             f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
                    print(f"{kind}: {where}: {' '.join(argv) if kind == 'checked' else cmd}", flush=True)
                    if kind == "ran":
                        ran += 1
                    else:
                        checked += 1
    finally:
        if not os.environ.get("KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
    if ran == 0:
        fail("no command ran")
    print(f"PASSED: {ran} commands ran as written, {checked} checked with validate or --dry-run, "
          f"{skipped} not run (make, git, or cluster-only)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The CI guide's snippets run as written.

Takes the shell block that saves a baseline and the GitLab CI and GitHub Actions YAML blocks
from docs/guide-ci.md, and runs their feedbench commands in a scratch folder laid out like a checkout
(build/feedbench, configs/ci.ini): the baseline is saved and listed, each pipeline runs
configs/ci.ini and compares it with the baseline, and the files each pipeline publishes
(JUnit, Markdown, JSON) must exist and say what the exit status said. Lines that need a CI
system or the network (make build, git, curl, gh, $GITHUB_STEP_SUMMARY) are skipped.

usage: readme_snippets.py   (environment: FEEDBENCH, FEEDBENCH_SOURCE_DIR)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = ("make build", "git ", "curl ", "gh ", "GITHUB_STEP_SUMMARY")


def fail(msg):
    print("FAIL (readme_snippets): " + msg, file=sys.stderr)
    sys.exit(1)


def yaml_commands(block):
    """The shell commands of a GitLab `script:` list or GitHub `run:` steps, folded as YAML
    folds them (without a YAML parser: the snippets use plain and `>` scalars only)."""
    cmds, cur, in_script = [], None, False
    for line in block.splitlines():
        s = line.strip()
        if re.match(r"^(script|after_script|artifacts|variables|steps|with|env):", s):
            in_script = s.startswith("script:")
            if cur:
                cmds.append(cur)
                cur = None
            continue
        m = re.match(r"^- run: (>|\|)?\s*(.*)$", s)
        if m:
            if cur:
                cmds.append(cur)
            cur = m.group(2) if m.group(2) else ""
            continue
        if in_script and s.startswith("- "):
            if cur:
                cmds.append(cur)
            cur = s[2:]
            continue
        if cur is not None and s and not s.startswith("- ") and ":" not in s.split(" ")[0]:
            cur = (cur + " " + s).strip()
            continue
        if cur is not None:
            cmds.append(cur)
            cur = None
    if cur:
        cmds.append(cur)
    return [c for c in cmds if c and "feedbench" in c or c.startswith("rm -rf")]


def run(cmd, cwd, env):
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    fb = os.environ["FEEDBENCH"]
    src = os.environ["FEEDBENCH_SOURCE_DIR"]
    readme = open(os.path.join(src, "docs", "guide-ci.md"), encoding="utf-8").read()
    section = readme.split("## Regression gates in CI", 1)
    if len(section) != 2:
        fail("docs/guide-ci.md has no 'Regression gates in CI' section")
    section = section[1].split("\n## ", 1)[0]
    sh = re.findall(r"```sh\n(.*?)```", section, re.S)
    yml = re.findall(r"```yaml\n(.*?)```", section, re.S)
    if len(sh) != 1 or len(yml) != 2:
        fail("expected one sh block and two yaml blocks (GitLab, GitHub) in the section")

    tmp = tempfile.mkdtemp(prefix="fb_readme_")
    try:
        os.makedirs(os.path.join(tmp, "build"))
        os.makedirs(os.path.join(tmp, "configs"))
        os.symlink(fb, os.path.join(tmp, "build", "feedbench"))
        shutil.copy(os.path.join(src, "configs", "ci.ini"), os.path.join(tmp, "configs"))
        env = dict(os.environ)

        # The baseline, as the README says to save it.
        saved = False
        for line in sh[0].splitlines():
            cmd = line.split("#", 1)[0].strip()
            if not cmd or any(s in cmd for s in SKIP):
                continue
            rc, out, err = run(cmd, tmp, env)
            if rc != 0:
                fail(f"'{cmd}' exited {rc}: {err.strip()}")
            saved |= "baseline save" in cmd
            if "baseline list" in cmd and "ci-main" not in out:
                fail(f"'{cmd}' does not list ci-main:\n{out}")
        if not saved or not os.path.isfile(
            os.path.join(tmp, "results", "baselines", "ci-main", "fingerprint.json")
        ):
            fail("the sh block did not save results/baselines/ci-main")

        for name, block in zip(("GitLab CI", "GitHub Actions"), yml):
            cmds = [c for c in yaml_commands(block) if not any(s in c for s in SKIP)]
            compares = [c for c in cmds if "feedbench compare" in c]
            if len(compares) != 1:
                fail(f"{name}: expected one compare command, found {cmds}")
            for f in ("feedbench-junit.xml", "feedbench.md", "feedbench.json"):
                if os.path.exists(os.path.join(tmp, f)):
                    os.remove(os.path.join(tmp, f))
            for cmd in cmds:
                rc, out, err = run(cmd, tmp, env)
                if "feedbench compare" in cmd:
                    if rc not in (0, 1, 4):
                        fail(f"{name}: '{cmd}' exited {rc} (0, 1 or 4 expected): {err.strip()}")
                    if "verdict:" not in out:
                        fail(f"{name}: compare printed no verdict line:\n{out}")
                elif rc != 0:
                    fail(f"{name}: '{cmd}' exited {rc}: {err.strip()}")
            summary = json.load(open(os.path.join(tmp, "feedbench.json")))
            if summary["exit_status"] != rc:
                fail(f"{name}: feedbench.json says exit {summary['exit_status']}, compare exited {rc}")
            tree = ET.parse(os.path.join(tmp, "feedbench-junit.xml"))
            cases = tree.getroot().findall("./testsuite/testcase")
            if len(cases) != len(summary["comparisons"]) or not cases:
                fail(f"{name}: {len(cases)} JUnit testcases for {len(summary['comparisons'])} comparisons")
            md = open(os.path.join(tmp, "feedbench.md"), encoding="utf-8").read()
            if "| metric | baseline | current |" not in md:
                fail(f"{name}: feedbench.md has no table")
            print(f"{name}: {len(cmds)} commands ran; compare exited {rc} "
                  f"({summary['verdict']}, {len(cases)} testcases)")
    finally:
        if not os.environ.get("KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

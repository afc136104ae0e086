#!/bin/bash
# Every reference in the repository points inside the repository: a file of the repository that
# names a document (`DESIGN.md`, `docs/foo.md`, a Markdown link `[x](foo.md)`) must name one the
# repository contains, and nothing cites an issue tracker's numbers ("issue 12", "#12"): what
# the code relies on is written down in docs/, in words a reader of this repository can follow.
#
#   tests/style/refs.sh [REPO]     (default: the repository this script is in)
#
# Prints one line per bad reference, file:line first, and exits 1 when there is any.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 2
git rev-parse --git-dir >/dev/null 2>&1 || { echo "refs: $ROOT is not a git work tree"; exit 2; }

bad=0
report() { echo "$1: $2"; bad=1; }
me=tests/style/refs.sh
# Tracked files as the work tree has them (a deleted one no longer counts).
files=$(git ls-files --cached --others --exclude-standard | while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done)
mds=$(printf '%s\n' "$files" | grep -E '\.md$')
has_md() { printf '%s\n' "$mds" | grep -qxF -- "$1"; }
has_md_name() { printf '%s\n' "$mds" | grep -qE "(^|/)$(printf '%s' "$1" | sed 's/[.]/[.]/g')\$"; }

# 1. Upper-case document names (README.md, CONTRIBUTING.md, ...) must be files of the repository.
while IFS=: read -r f n name; do
	[ "$f" = "$me" ] && continue
	has_md_name "$name" || report "$f:$n" "names $name, which this repository does not contain"
done < <(git grep --untracked -I -n -o -E '\b[A-Z][A-Z0-9_]+\.md\b' -- . ":!$me")

# 2. Paths docs/NAME.md, from any file, relative to the repository root.
while IFS=: read -r f n path; do
	has_md "$path" || report "$f:$n" "names $path, which this repository does not contain"
done < <(git grep --untracked -I -n -o -E '\bdocs/[A-Za-z0-9_-]+\.md\b' -- . ":!$me")

# 3. Markdown links to .md files, relative to the linking file.
while IFS=: read -r f n link; do
	target=${link#](}
	target=${target%)}
	target=${target%%#*}
	case $target in http*://*) continue ;; esac
	dir=$(dirname "$f")
	norm=$(realpath -m --relative-to=. "$dir/$target")
	has_md "$norm" || report "$f:$n" "links to $target, which this repository does not contain"
done < <(git grep --untracked -I -n -o -E '\]\([^) ]+\.md(#[^) ]*)?\)' -- '*.md')

# 4. Issue numbers and the rows of documents kept elsewhere.
while IFS= read -r hit; do
	report "${hit%%:*}:$(echo "$hit" | cut -d: -f2)" "cites an issue number or an outside document: $(echo "$hit" | cut -d: -f3- | sed 's/^[[:space:]]*//' | cut -c1-100)"
done < <(git grep --untracked -I -n -E '\b[Ii]ssues?[- ]?#?[0-9]+\b|\b(FAILURES|DESIGN|REFERENCE)( [0-9]|:|'"'"'s)|(^|[ (])#[0-9]{1,4}\b[^-]' -- . ":!$me" | grep -v -E ':[0-9]+:#(include|if|define|endif|else|pragma|undef|error)\b')

if [ $bad -ne 0 ]; then
	echo "FAILED: references to what this repository does not contain (write it into docs/ and cite that)"
	exit 1
fi
echo "PASSED: every document named exists in the repository; no issue numbers"

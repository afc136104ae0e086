#!/bin/bash
# `feedbench search` at 4 ranks on tests/search/search.ini: a shared emulated device (one read
# at a time per node, 2 ms each) feeds a number of accelerators computed here from the config;
# the search must answer it (one fewer only where its trial at that count was inconclusive: a
# busy machine's noise). Then the same search with the device not
# shared (capacity grows with the ranks) must answer 4: the limit found is the device's.
#
# Environment from tests/CMakeLists.txt: FEEDBENCH, MPIEXEC, FEEDBENCH_SOURCE_DIR.
set -u
: "${FEEDBENCH_SOURCE_DIR:?FEEDBENCH_SOURCE_DIR not set}"
. "$FEEDBENCH_SOURCE_DIR/tests/lib.sh"
FAIL_WHAT=search
INI=$FEEDBENCH_SOURCE_DIR/tests/search/search.ini
lib_init search /tmp
cd "$T" || exit 1

# The analytic answer: n ranks need n x batch_size x read_latency of device time per step of
# computation_time; AU = min(1, C / (n B L)) >= T up to n = floor(C / (T B L)).
expected=$(python3 - "$INI" <<'PY'
import configparser, math, sys
c = configparser.ConfigParser(inline_comment_prefixes=(";",))
c.read(sys.argv[1])
ms = lambda v: float(v.strip().removesuffix("ms"))
C = ms(c["train"]["computation_time"])
T = float(c["train"]["au_threshold"])
B = int(c["reader"]["batch_size"])
L = ms(c["storage.faulty"]["read_latency"])
print(min(4, math.floor(C / (T * B * L) + 1e-9)))
PY
) || fail "cannot compute the expected answer"

fb_mpi 4 search "$INI" --output "$T/res"
[ "$RC" -eq 0 ] || fail "feedbench search exited $RC"
dir=$(ls -d "$T"/res/search-search-* 2>/dev/null | head -1)
[ -n "$dir" ] || fail "no search folder under $T/res"
[ -z "$(ls -A "$T/res" | grep '^\.')" ] || fail "a temporary folder was left in $T/res"
grep -q "^\*\*Answer: " "$dir/report.md" || fail "report.md has no answer"
grep -q "results: $dir" "$T/out" || fail "stdout does not name the folder"
python3 - "$dir" "$expected" <<'PY' || fail "search_results.json check failed"
import json, os, sys
d, exp = sys.argv[1], int(sys.argv[2])
r = json.load(open(os.path.join(d, "search_results.json")))
ans = r["answer_accelerators"]
tried = [t["accelerators"] for t in r["trials"]]
print(f"expected {exp}, search answered {ans}, tried {tried}, margin {r['noise_margin']}")
assert tried[0] == 4, "the first trial must use every rank"
# A busy machine only adds data wait (AU falls, never rises): where the trial at the predicted
# count is one the decision module calls inconclusive (its spread cannot place it against the
# threshold), the search may answer one fewer; a device faster or slower than configured still
# fails (an answer above the prediction, or below it with that trial clearly below).
at_exp = [t for t in r["trials"] if t["accelerators"] == exp]
noisy = bool(at_exp) and at_exp[0]["au_vs_threshold"] == "inconclusive"
assert ans == exp or (noisy and ans == exp - 1), \
    f"answer {ans}, the config predicts {exp} (AU 100 % at 2 ranks, 83 % at 3)"
if ans != exp:
    print(f"answered {ans}: the trial at {exp} was inconclusive (load)")
for t in r["trials"]:
    assert os.path.isfile(os.path.join(d, t["run_dir"], "summary.json")), t["run_dir"]
    assert t["pass"] == (t["au_pct_mean"] >= r["au_threshold_pct"])
    assert t["repetitions"] == 2 and t["bandwidth_mib_s_mean"] > 0
    # the decision module's verdict against the threshold agrees with pass where it is sure
    v = t["au_vs_threshold"]
    print("%d accelerators: AU %.2f +- %.2f: %s" % (t["accelerators"], t["au_pct_mean"],
                                                   t["au_pct_stddev"], v))
    assert v in ("above", "below", "inconclusive"), v
    assert (v != "above" or t["pass"]) and (v != "below" or not t["pass"]), t
    assert "Welch's t-test" in t["au_vs_threshold_why"], t
    if t["accelerators"] <= ans:
        assert t["pass"]
    else:
        assert not t["pass"]
PY

# Not shared: every rank has its own 2 ms device, four ranks are fed as well as one.
fb_mpi 4 search "$INI" --output "$T/res2" --set storage.faulty.shared_device=false -q
[ "$RC" -eq 0 ] || fail "feedbench search (not shared) exited $RC"
r=$(ls "$T"/res2/*/search_results.json | head -1)
echo "not shared: answered $(json_get "$r" "s['answer_accelerators']")"
# with a device per rank the answer must be 4 after one trial
json_check "$r" "s['answer_accelerators'] == 4 and len(s['trials']) == 1"

# accelerators_per_rank = 2 on 2 ranks: the search counts accelerators (ranks x 2), not ranks.
fb_mpi 2 search "$INI" --output "$T/res4" --set storage.faulty.shared_device=false \
	--set train.accelerators_per_rank=2 -q
[ "$RC" -eq 0 ] || fail "feedbench search (accelerators_per_rank = 2) exited $RC"
r=$(ls "$T"/res4/*/search_results.json | head -1)
echo "2 ranks x 2 accelerators: answered $(json_get "$r" "s['answer_accelerators']")"
# with 2 accelerators per rank the answer must count 4 accelerators
json_check "$r" "s['answer_accelerators'] == 4" "s['answer_ranks'] == 2" \
	"s['accelerators_per_rank'] == 2" "s['trials'][0]['accelerators'] == 4"
grep -q "^\*\*Answer: 4 accelerators" "$T"/res4/*/report.md || fail "report.md does not count accelerators"

# A workload that is not training is refused before anything runs.
fb_mpi 2 search "$INI" --set workload.type=ior --output "$T/res3"
[ "$RC" -eq 2 ] || fail "search of an ior workload exited $RC, expected 2"
grep -q "needs \[workload\] type = train" "$T/err" || fail "no message for a non-train search"
echo "search: ok"

# Per-rank timeline of one run: what each thread of each rank was doing (read, compute,
# wait for data, step barrier) against time. One band per rank, one lane per thread inside it:
# the lowest lane of a band is the trainer, the others its reader threads. Dashed lines mark
# where each epoch began (rank 0's clock; kind "epoch" rows of timeline.csv).
# Variables: csv (timeline.csv: rank,thread,kind,start_seconds,end_seconds), out,
# title_text, maxrows (rows drawn at most, to keep the SVG small).
set encoding utf8
set datafile separator comma
set datafile columnheaders

stats csv using (column("thread")) nooutput
tmin = STATS_min
lanes = STATS_max - STATS_min + 1
stats csv using (column("rank")) nooutput
nranks = STATS_max + 1
lane(r, t) = r + 0.05 + 0.9 * (t - tmin + 0.5) / lanes
is(k) = strcol("kind") eq k

set title title_text noenhanced
set xlabel "time since the run started (s)" noenhanced
set ylabel "one lane per thread" noenhanced
set yrange [0:nranks]
# A band per rank, labelled at its middle, with a rule between bands.
set ytics scale 0 ()
do for [r = 0:nranks - 1] {
	set ytics add (sprintf("rank %d", r) r + 0.5)
	if (r > 0) {
		set arrow from graph 0, first r to graph 1, first r nohead lc rgb "#bbbbbb"
	}
}
# Which lane is the trainer: named at the right edge of every band.
do for [r = 0:nranks - 1] {
	set label sprintf("trainer") at graph 1.005, first lane(r, 0) left font ",8"
	if (lanes > 1) {
		set label sprintf("readers") at graph 1.005, first lane(r, tmin + lanes - 1) left \
			font ",8"
	}
}
set grid xtics
set rmargin 10
set key outside bottom center horizontal noenhanced

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1200,300 + 120 * nranks noenhanced font ",10"
	} else {
		set terminal svg size 1200,300 + 120 * nranks noenhanced font ",10"
	}
	set output out.".".fmt
	plot csv every ::0::maxrows using (column("start_seconds")) \
		:(is("read") ? lane(column("rank"), column("thread")) : NaN) \
		:(column("end_seconds") - column("start_seconds")):(0) \
		with vectors nohead lw 4 lc rgb "#1f77b4" title "read", \
	     csv every ::0::maxrows using (column("start_seconds")) \
		:(is("compute") ? lane(column("rank"), column("thread")) : NaN) \
		:(column("end_seconds") - column("start_seconds")):(0) \
		with vectors nohead lw 4 lc rgb "#2ca02c" title "compute", \
	     csv every ::0::maxrows using (column("start_seconds")) \
		:(is("wait") ? lane(column("rank"), column("thread")) : NaN) \
		:(column("end_seconds") - column("start_seconds")):(0) \
		with vectors nohead lw 4 lc rgb "#d62728" title "wait for data", \
	     csv every ::0::maxrows using (column("start_seconds")) \
		:(is("barrier") ? lane(column("rank"), column("thread")) : NaN) \
		:(column("end_seconds") - column("start_seconds")):(0) \
		with vectors nohead lw 4 lc rgb "#ff7f0e" title "step barrier", \
	     csv every ::0::maxrows using (column("start_seconds")) \
		:((is("epoch") && column("rank") == 0) ? 0 : NaN):(0):(nranks) \
		with vectors nohead dt 2 lw 1 lc rgb "#555555" title "epoch start"
	unset output
}

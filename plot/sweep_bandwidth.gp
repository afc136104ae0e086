# Bandwidth (mean ± stddev over repetitions) against one numeric swept key, one line per
# combination of the other swept keys.
# Variables: csv (sweep.csv), out (path without extension), title_text, xcol (column of the
# swept key, canonical numbers: bytes, seconds), xlabel_text, xlog (1: log2 x axis),
# nseries, sel(i) (true when a row belongs to series i), stitle(i) (its legend).
set encoding utf8
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"
ycol = "bandwidth_MiB_per_second"

# One block per series, separated by two blank lines, so each series is an `index`.
set table $S
do for [i = 1:nseries] {
	set table $S append
	plot csv using (column(xcol)):(column(ycol."_mean")):(column(ycol."_stddev")) \
		with table if (sel(i) && column("done") == 1)
	unset table
	set print $S append
	print ""
	print ""
	unset print
}
set datafile separator whitespace
set datafile nocolumnheaders

set title title_text noenhanced
set xlabel xlabel_text noenhanced
set ylabel "read bandwidth (MiB/s, mean ± stddev)" noenhanced
set grid
set key outside right top noenhanced
set yrange [0:*]
set offsets graph 0.03, graph 0.03, 0, 0
if (xlog) { set logscale x 2 }

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1100,600 noenhanced font ",10"
	} else {
		set terminal svg size 1100,600 noenhanced font ",10"
	}
	set output out.".".fmt
	plot for [i = 0:nseries - 1] $S index i using 1:2:3 with yerrorlines lw 2 pt 7 \
		title stitle(i + 1)
	unset output
}

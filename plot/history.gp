# The trend of one metric over time: every run below a folder, one line per series (a workload
# configuration), mean ± stddev over each run's repetitions.
# Variables: csv (history.csv), out (path without extension), title_text, ylabel_text,
# xfmt (time format of the x tics), nseries, t1..tN (legend of series N; rows carry
# series_id N).
set encoding utf8
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

set title title_text noenhanced
set ylabel ylabel_text noenhanced
set xlabel "run start (UTC)" noenhanced
set xdata time
set timefmt "%Y-%m-%dT%H:%M:%SZ"
set format x xfmt
set grid
set key outside right top noenhanced
set yrange [0:*]
set offsets graph 0.03, graph 0.03, graph 0.05, 0
stitle(i) = value(sprintf("t%d", i))
at(i) = (column("series_id") == i) ? timecolumn(1, "%Y-%m-%dT%H:%M:%SZ") : NaN

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1100,600 noenhanced font ",10"
	} else {
		set terminal svg size 1100,600 noenhanced font ",10"
	}
	set output out.".".fmt
	plot for [i = 1:nseries] csv using (at(i)):(column("mean")):(column("stddev")) \
		with yerrorlines lw 2 pt 7 title stitle(i)
	unset output
}

# Cumulative distribution of read latency for one run (every read call of every epoch and
# rank, from the merged log-linear histogram: relative error <= 1/16), log x axis.
# Variables: csv (latency.csv: bucket_upper_seconds,count,cumulative_fraction), out,
# title_text.
set encoding utf8
set datafile separator comma
set datafile columnheaders

set title title_text noenhanced
set xlabel "read latency (ms, log scale; bucket upper edges)" noenhanced
set ylabel "fraction of reads at or below" noenhanced
set logscale x
set yrange [0:1.02]
set ytics 0.1
set grid xtics ytics mxtics
set key right bottom noenhanced
# Reference lines at the percentiles the tables report.
set arrow 1 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 3 lc rgb "#7f7f7f"
set arrow 2 from graph 0, first 0.99 to graph 1, first 0.99 nohead dt 3 lc rgb "#7f7f7f"
set label 1 "p50" at graph 0.01, first 0.5 offset 0,0.5 textcolor rgb "#7f7f7f"
set label 2 "p99" at graph 0.01, first 0.99 offset 0,-0.8 textcolor rgb "#7f7f7f"

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 900,550 noenhanced font ",10"
	} else {
		set terminal svg size 900,550 noenhanced font ",10"
	}
	set output out.".".fmt
	plot csv using (column("bucket_upper_seconds") * 1000):(column("cumulative_fraction")) \
		with steps lw 2 lc rgb "#1f77b4" title "read latency CDF"
	unset output
}

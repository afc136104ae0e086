# Read latency percentiles per sweep point (means over repetitions), log scale.
# Variables: csv (sweep.csv), out, title_text.
set encoding utf8
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"
array Q[4] = ["p50", "p90", "p99", "p999"]
array T[4] = ["p50", "p90", "p99", "p99.9"]
ms(q) = (column("done") == 1 ? column("latency_".q."_seconds_mean") * 1000 : NaN)

set title title_text noenhanced
set ylabel "read latency (ms, log scale)" noenhanced
set style data histograms
set style histogram clustered gap 2
set style fill solid 0.75 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set key outside right top noenhanced
set xtics rotate by 30 right noenhanced

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1100,600 noenhanced font ",10"
	} else {
		set terminal svg size 1100,600 noenhanced font ",10"
	}
	set output out.".".fmt
	plot for [k = 1:4] csv using (ms(Q[k])):xtic(strcol("label")) title T[k]
	unset output
}

# Accelerator utilisation per epoch of one run against the pass threshold. Bars are green
# at or above the threshold, red below it.
# Variables: csv (epochs.csv), out, title_text, threshold (AU threshold, %).
set encoding utf8
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

set title title_text noenhanced
set xlabel "epoch (repetitions one after another)" noenhanced
set ylabel "accelerator utilisation (%)" noenhanced
set yrange [0:105]
set grid ytics
set key outside right top noenhanced
set style fill solid 0.75 border -1
set boxwidth 0.7
set xtics 1
colour(au) = au >= threshold ? 0x2ca02c : 0xd62728

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 900,500 noenhanced font ",10"
	} else {
		set terminal svg size 900,500 noenhanced font ",10"
	}
	set output out.".".fmt
	plot csv using (column(0) + 1):(column("au_percentage")):(colour(column("au_percentage"))) \
		with boxes lc rgb variable title "AU per epoch", \
		threshold with lines dt 2 lw 2 lc rgb "#d62728" \
		title sprintf("threshold %g%%", threshold)
	unset output
}

# Clustered bars comparing the points of a sweep: one cluster per value of the category key
# (the format, say), one bar per combination of the other swept keys, error bars = stddev
# over repetitions. Three panels: bandwidth, samples/s, AU.
# Variables: csv (sweep.csv), out, title_text, catcol (column naming the clusters; "label"
# when nothing is categorical), nseries, sel(i), stitle(i), threshold (AU threshold, %).
set encoding utf8
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"
array M[3] = ["bandwidth_MiB_per_second", "samples_per_second", "au_percentage"]
array L[3] = ["read bandwidth (MiB/s)", "samples/s", "AU (%)"]

set table $S
do for [i = 1:nseries] {
	set table $S append
	plot csv using (strcol(catcol)):(column(M[1]."_mean")):(column(M[1]."_stddev")) \
		:(column(M[2]."_mean")):(column(M[2]."_stddev")) \
		:(column(M[3]."_mean")):(column(M[3]."_stddev")) \
		with table if (sel(i) && column("done") == 1)
	unset table
	set print $S append
	print ""
	print ""
	unset print
}
# Category names may hold spaces: the table separates fields with tabs.
set datafile separator "\t"
set datafile nocolumnheaders

set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.75 border -1
set boxwidth 0.9
set grid ytics
set key outside right top noenhanced
if (catcol eq "label") { set xtics rotate by 30 right noenhanced } else { set xtics noenhanced }
set yrange [0:*]

do for [fmt in "png svg"] {
	if (fmt eq "png") {
		set terminal pngcairo size 1100,1200 noenhanced font ",10"
	} else {
		set terminal svg size 1100,1200 noenhanced font ",10"
	}
	set output out.".".fmt
	set multiplot layout 3,1 title title_text noenhanced
	do for [k = 1:3] {
		set ylabel L[k]." (mean ± stddev)" noenhanced
		if (k == 3) {
			# AU is a percentage: the threshold line stays inside the panel (an
			# autoscaled axis below it drew the line over the samples/s panel).
			set yrange [0:100]
			set arrow 1 from graph 0, first threshold to graph 1, first threshold \
				nohead dt 2 lw 2 lc rgb "#d62728" front
			set label 1 sprintf("AU threshold %g%%", threshold) at graph 0.01, \
				first threshold offset 0,0.6 textcolor rgb "#d62728" front
		}
		plot for [i = 0:nseries - 1] $S index i using 2 * k:2 * k + 1:xtic(1) \
			title stitle(i + 1)
		unset arrow 1
		unset label 1
		set yrange [0:*]
	}
	unset multiplot
	unset output
}

# common.gp: settings shared by every decbench plot script (loaded first by each of them).
#
# Variables (pass with gnuplot -e "datadir='...'; outdir='...'; plotsdir='...'"):
#   datadir   folder holding the .tsv files written by report_plot_data()   (default ".")
#   outdir    folder receiving <name>.png and <name>.svg                     (default ".")
#   plotsdir  this folder, so scripts can load this file                     (default "plots")
if (!exists("datadir")) datadir = "."
if (!exists("outdir")) outdir = "."

# Data files are tab-separated (decoder specs contain commas and spaces); "?" = missing.
set datafile separator "\t"
set datafile missing "?"

# cairo draws anti-aliased text; the libgd "png" terminal is the fallback when cairo is absent.
png_term = strstrt(GPVAL_TERMINALS, " pngcairo ") > 0 ? "pngcairo" : "png"
png_font = png_term eq "pngcairo" ? "Sans,11" : "arial,11"

# "noenhanced": spec strings are full of "_" and "^" that must not become sub/superscripts.
to_png(name) = sprintf("set terminal %s size 1100,620 noenhanced font '%s'; set output '%s/%s.png'", png_term, png_font, outdir, name)
to_svg(name) = sprintf("set terminal svg size 1100,620 noenhanced dynamic font 'Sans,12' background rgb 'white'; set output '%s/%s.svg'", outdir, name)

set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lc rgb "#404040"
set tics nomirror
set key noenhanced box lc rgb "#c0c0c0" opaque
# A palette that stays distinguishable in print and for common colour-vision deficiencies.
set linetype 1 lc rgb "#0072B2" lw 2 pt 7 ps 1.2
set linetype 2 lc rgb "#E69F00" lw 2 pt 5 ps 1.2
set linetype 3 lc rgb "#009E73" lw 2 pt 9 ps 1.3
set linetype 4 lc rgb "#CC79A7" lw 2 pt 11 ps 1.3
set linetype 5 lc rgb "#56B4E9" lw 2 pt 13 ps 1.3
set linetype 6 lc rgb "#D55E00" lw 2 pt 3 ps 1.3
set linetype 7 lc rgb "#F0E442" lw 2 pt 1 ps 1.3
set linetype 8 lc rgb "#000000" lw 2 pt 2 ps 1.3
set linetype cycle 8

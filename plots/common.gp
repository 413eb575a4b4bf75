# common.gp: settings shared by every decbench plot script (loaded first by each of them).
#
# Run in the folder of the data: `gnuplot plots/common.gp plots/<name>.gp` reads <name>.tsv and
# writes <name>.png and <name>.svg in the current folder. No path is ever passed to gnuplot as
# text: a folder name reaching a gnuplot string or `eval` could end the string and run commands
# (`--out "x';system('...');'"`), so report_plot_render() runs gnuplot inside a private folder
# with these fixed names instead and moves the figures into place itself.

# Data files are tab-separated (decoder specs contain commas and spaces); "?" = missing.
set datafile separator "\t"
set datafile missing "?"

# cairo draws anti-aliased text; the libgd "png" terminal is the fallback when cairo is absent.
png_term = strstrt(GPVAL_TERMINALS, " pngcairo ") > 0 ? "pngcairo" : "png"
png_font = png_term eq "pngcairo" ? "Sans,11" : "arial,11"

# "noenhanced": spec strings are full of "_" and "^" that must not become sub/superscripts.
# Terminal names are keywords, not expressions, hence `eval`; these strings hold only the
# constants above, never a path or a value from the database.
png_terminal = sprintf("set terminal %s size 1100,620 noenhanced font '%s'", png_term, png_font)
svg_terminal = "set terminal svg size 1100,620 noenhanced dynamic font 'Sans,12' background rgb 'white'"

set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lc rgb "#404040"
set tics nomirror
# Left-justified after the sample, with room to spare: gnuplot sizes the box from an estimate
# of the text's width, and with pngcairo's font the estimate fell short of long labels, whose
# text ran past the box ("lookahead:W=1,N=2,G=1" in a right-justified key).
set key noenhanced box lc rgb "#c0c0c0" opaque Left reverse width 2
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
# Bars of a histogram beyond the palette's 8 colours take a fill pattern (speedup.gp), so that a
# ninth decoder is not the first one's twin.

# Shell functions of the bb-seek benchmark scripts (sourced, not run): medians, ratios
# and the tables of bb-seek's CSV reports.

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Rows of bb-seek's CSV as "benchmark key client read-size score error unit".
rows() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); col[$i] = i }; next }
        { for (i = 1; i <= NF; i++) gsub(/"/, "", $i)
          print $1, $(col["Param: key"]), $(col["Param: client"]), $(col["Param: read-size"]), $5, $6, $7 }' "$1"
}
# The score of benchmark $2 for client $3 (and read size $4, default any) in CSV $1.
score() { rows "$1" | awk -v b="$2" -v c="$3" -v r="${4:-}" '$1 == b && $3 == c && (r == "" || $4 == r) { print $5; exit }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# The per-pattern table of a CSV report: requests, KiB fetched, amplification and ms/op,
# plain against stream.
pattern_table() {
    echo "| object | pattern | read size | plain req/op | stream req/op | plain KiB/op | stream KiB/op | stream amplification | plain ms/op | stream ms/op | plain / stream time |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    rows "$1" | awk '
        { split($1, n, ":"); name = n[2] == "" ? "time" : n[2]; sub(/^bb\.seek\./, "", n[1])
          k = $2 " " n[1] " " $4; v[k, $3, name] = $5; e[k, $3, name] = $6
          if (!(k in seen)) { seen[k] = 1; order[++count] = k } }
        END { for (i = 1; i <= count; i++) { k = order[i]; split(k, f, " ")
            printf "| %s | %s | %s | %g | %g | %.0f | %.0f | %.3f | %.3f ± %.3f | %.3f ± %.3f | %.2f |\n", f[1], f[2], f[3],
                v[k, "plain", "requests"], v[k, "stream", "requests"], v[k, "plain", "fetched"], v[k, "stream", "fetched"],
                v[k, "stream", "amplification"], v[k, "plain", "time"], e[k, "plain", "time"],
                v[k, "stream", "time"], e[k, "stream", "time"], v[k, "plain", "time"] / v[k, "stream", "time"] } }'
}

package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// median returns the median of xs (the mean of the middle two for an even
// count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread returns "min–max" of xs at the precision.
func spread(xs []float64, prec int) string {
	return fmt.Sprintf("%.*f–%.*f", prec, slices.Min(xs), prec, slices.Max(xs))
}

// ratio returns b/a, or "-" when a is 0.
func ratio(b, a float64) string {
	if a == 0 {
		return "-"
	}
	if r := b / a; r >= 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.3f", b/a)
}

func values(ss []pair, get func(pair) float64) []float64 {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = get(s)
	}
	return xs
}

// printTable prints queue × measure: A's and B's medians, B/A and the
// spread (min–max) of each.
func printTable(w io.Writer, chosen []queue, results map[string]map[string][]pair) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "queue\tmeasure\tA median\tB median\tB/A\tA min–max\tB min–max\t")
	for _, q := range chosen {
		for i, m := range measures {
			a, b := values(results[q.name]["A"], m.get), values(results[q.name]["B"], m.get)
			label := ""
			if i == 0 {
				label = q.label
			}
			fmt.Fprintf(tw, "%s\t%s\t%.*f\t%.*f\t%s\t%s\t%s\t\n", label, m.name, m.prec, median(a), m.prec, median(b),
				ratio(median(b), median(a)), spread(a, m.prec), spread(b, m.prec))
		}
	}
	return tw.Flush()
}

// printLoads prints each queue's median CPU per alert, with and without
// the start-up, beside Python's json.loads of the same lines.
func printLoads(w io.Writer, chosen []queue, results map[string]map[string][]pair, loads map[string][]float64) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "queue\tjson.loads µs/line\tmin–max\tA/json.loads\tB/json.loads\tA/json.loads less start-up\tB/json.loads less start-up\t")
	for _, q := range chosen {
		l := median(loads[q.file])
		var r []string
		for _, m := range measures[:2] {
			for _, side := range []string{"A", "B"} {
				r = append(r, ratio(median(values(results[q.name][side], m.get)), l))
			}
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", q.label, l, spread(loads[q.file], 2), r[0], r[1], r[2], r[3])
	}
	return tw.Flush()
}

package openrecall

import "fmt"

// NanoUSD is an amount of money in nano-dollars (1e-9 USD). All cost
// arithmetic is integer; Dollars is for display only.
type NanoUSD int64

// NanoPerDollar is the number of nano-dollars in one dollar.
const NanoPerDollar NanoUSD = 1_000_000_000

// Dollars returns the amount in dollars, for display.
func (n NanoUSD) Dollars() float64 { return float64(n) / float64(NanoPerDollar) }

// String formats the amount as dollars with six decimals, such as "$0.001250".
func (n NanoUSD) String() string {
	sign := ""
	v := int64(n)
	if v < 0 {
		sign = "-"
		v = -v
	}
	micro := (v + 500) / 1000
	return fmt.Sprintf("%s$%d.%06d", sign, micro/1_000_000, micro%1_000_000)
}

// DollarsToNano converts a dollar amount (from configuration or a flag) to
// nano-dollars, rounding to the nearest nano-dollar.
func DollarsToNano(d float64) NanoUSD {
	if d < 0 {
		return -DollarsToNano(-d)
	}
	return NanoUSD(d*float64(NanoPerDollar) + 0.5)
}

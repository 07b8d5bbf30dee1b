package fingerprint

import "strings"

// identityValue returns the value of identity label l as the identity holds
// it (DESIGN §4): a pod names its owner (podOwner); any other value loses a
// Deployment pod's hash suffix or a CronJob run's suffix (its scheduled
// time in minutes, eight digits, and the random suffix of the run's pod
// after it), so a CronJob's runs are one alert. A value that holds a dot, a
// colon or a slash — an IP, a URL, a host name, a blackbox probe's target —
// is kept as it is.
func (e *Extractor) identityValue(l, v string) string {
	if l == "pod" || l == "pod_name" {
		return e.podOwner(v)
	}
	return runOwner(v)
}

// runOwner is v without a trailing pod hash suffix or CronJob run suffix.
func runOwner(v string) string {
	if strings.ContainsAny(v, ".:/") {
		return v
	}
	if podSuffix.MatchString(v) {
		i := strings.LastIndexByte(v, '-')
		return v[:strings.LastIndexByte(v[:i], '-')]
	}
	if i := strings.LastIndexByte(v, '-'); i > 0 && len(v)-i-1 == 5 && isLowerAlnum(v[i+1:]) {
		if j := cronRunStart(v[:i]); j > 0 {
			return v[:j]
		}
	}
	if j := cronRunStart(v); j > 0 {
		return v[:j]
	}
	return v
}

// cronRunStart returns where a trailing "-" and eight digits start in v, or
// -1.
func cronRunStart(v string) int {
	i := len(v) - 9
	if i <= 0 || v[i] != '-' {
		return -1
	}
	for k := i + 1; k < len(v); k++ {
		if !isDigit(v[k]) {
			return -1
		}
	}
	return i
}

func isLowerAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && (s[i] < 'a' || s[i] > 'z') {
			return false
		}
	}
	return true
}

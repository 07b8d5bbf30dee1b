package fingerprint

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Template returns the template of a summary or title (DESIGN §4, "Identity,
// refined"): its first line, lowercased and whitespace-collapsed, each
// white-space-separated token classified and its variable parts masked as
// "*", runs of masked tokens written as one "*". A line with no letter left
// is no template (""). Template is a pure function of its input and is
// idempotent.
//
// The rule, token by token (punctuation around a token — quotes, brackets,
// a trailing comma, colon or full stop — is kept as it is):
//
//   - Masked whole: a token that starts with a digit, a signed digit or a
//     bound ("<1", ">=5") (numbers, "-5", "+3", numbers with units "12ms",
//     "3.5gb", "91%", durations "1h30m", dates, times "21:54:44", versions,
//     IPv4 addresses with ports); URLs; e-mail addresses; paths
//     ("/var/lib/x", "./ibdata1", "~/x", "c:\x"); IPv6 and MAC addresses;
//     hex ids and masks (8 or more hex digits: no word of eight letters is
//     spelt with a to f alone); Deployment pod names (a replica-set hash and
//     pod suffix in Kubernetes' vowel-free alphabet); dotted host names
//     (labels of letters, digits and hyphens ending in a generic or local
//     top-level domain — com, net, org, edu, io, local, internal… — or in a
//     country domain under a second-level one — edu.hk, co.uk, net.om — so
//     that names of code such as "com.apple.iokit.io80211family" and
//     "mapred.task.id" stay; "*.corp.example.org" too) and a dotted name
//     with a port ("csdnimg.cn:80").
//   - An empty quoted or bracketed value ("()", `""`) is a value: "(*)".
//   - A unit word right after a masked number ("1.09 KB", "5 days", "815
//     bytes") and a month, weekday, time-zone or am/pm word next to a masked
//     number or another such word ("Feb 21 21:54:44", "Tue Jan 5", "13:36:42
//     CEST") are part of it; "may" alone is a word. A bracketed number and
//     unit right after a number and its unit restates it and joins it
//     ("1,190 bytes (1.16 KB)" is one value).
//   - The word after "for user", "invalid user" (and a few such leads), a
//     word between "for" and "from", and the word between "sudo:" and ":"
//     name an account and are masked ("invalid user *", "failed password
//     for * from *", "sudo: * : tty=…"), unless it is a word such as "not"
//     or "from"; "user uploads failing" keeps its words. The word after
//     "namespace" names a namespace and is masked.
//   - "key=value", "key:value" and "key: value": the key stays; the value
//     is classified as a token of its own, so it is masked only when its
//     class varies ("pid=*", "onextend:*", "status: *") or the key names a
//     host ("rhost=*", "host: *"), and a word value stays ("reason =
//     authfail:*" and "reason = assocfail:*" are two events, as "user=root"
//     and "user=guest" are in the labelled data). Comma- and
//     semicolon-separated lists inside a token are classified part by part.
//   - Other tokens are split at "-", "_", ".", "/", "@", "#", "[", "]",
//     "(", ")": a part that starts with a digit, is a hex id or holds more
//     than five digits is masked ("db-*", "sshd[*]", "blk_*",
//     "nightly-ledger-export-*"), a sign before it included, and so is a
//     part of one letter and digits, a grid position ("thunderbird_*" for
//     "Thunderbird_A3"; "v2" is a version and only its number goes); a name
//     with a part masked after a "-" (a host, node, instance or pod: "db-7",
//     "worker-12", "etl-5c4b3a291-k8j7h", a job's run, "shop/db-backup-29667092")
//     and a dotted name with a part masked whole are masked whole; a dot
//     leader ("dcbf.........0") is no dotted name.
//   - A name (or part) made of letters and then digits is a kind and an
//     instance: the letters stay and the number is masked ("eth0" and
//     "eth1" are "eth*", "wlan0" stays another kind, "cn304" is "cn*",
//     "ib_logfile0" is "ib_logfile*"), except names of kinds that end in
//     digits ("ipv4", "sha256", "ext4", "s3", "x86": kindNames) and
//     catalogue ids (ATT&CK "T1059", "T1059.001", "TA0004"; "CVE-2021-42278",
//     "CWE-79"), which name a detection and stay whole.
//   - A quoted word stays ("'active'" and "'inactive'" are two events); a
//     quoted value of a varying class is masked by the rules above.
//   - After an HTTP method (GET, POST, …) a path keeps its route shape: its
//     variable segments and its query are masked, the others stay
//     ("get /*/*/servers/detail" and "post /*/*/os-server-external-events"
//     are two events).
//   - A block of one to three words that holds a mask and repeats the block
//     before it is dropped: a list of values is one value ("delete blk_*"
//     for any number of blocks, "nodesets * <ok>").
func Template(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return ""
	}
	toks := make([]templateToken, len(fields))
	for i, f := range fields {
		pre, core, post := splitToken(unbracket(f))
		t := templateToken{pre: pre, core: core, post: post}
		switch {
		case core == "":
			if open, close, ok := emptyPair(pre, post); ok {
				t.pre, t.core, t.post = open, "*", close // an empty value: "()", "''"
			}
		case i > 0 && core[0] == '/' && httpMethods[toks[i-1].core]:
			t.core = routeShape(core)
		case i > 1 && nameKeys[toks[i-1].core] && toks[i-1].post == "" && toks[i-2].post == "" && accountLeads[toks[i-2].core] && !notNames[core]:
			t.core = "*" // the name after "user": invalid user *
		case i > 0 && i+1 < len(fields) && toks[i-1].core == "for" && pre == "" && post == "" && fields[i+1] == "from" && !notNames[core]:
			t.core = "*" // an account between "for" and "from": failed password for * from
		case i > 0 && toks[i-1].pre == "" && toks[i-1].post == "" && toks[i-1].core == "namespace" && !notNames[core]:
			t.core = "*" // a namespace's name: "pod * in namespace * is crash looping"
		case i > 0 && i+1 < len(fields) && toks[i-1].core == "sudo" && toks[i-1].post == ":" && fields[i+1] == ":":
			t.core = "*" // the account of a sudo line: "sudo: * : tty=…"
		case i > 0 && toks[i-1].post == ":" && toks[i-1].pre == "" && hostKeys[toks[i-1].core]:
			t.core = "*" // "host: db1"
		default:
			if c0 := core[0]; c0 == '<' || c0 == '>' || c0 == '=' || c0 == '~' || strings.HasSuffix(pre, "<") {
				if n := strings.TrimLeft(core, "<>=~"); n != "" && startsNumber(n) {
					core, t.pre = n, strings.TrimRight(pre, "<") // a bound: "<1 sec", ">=5"
				}
			}
			t.core = maskValue(core)
			t.num = t.core == "*" && startsNumber(core)
		}
		toks[i] = t
	}
	// Units after a masked number and calendar words beside a masked
	// token join the mask, to a fixed point (a weekday beside a month
	// beside a day).
	for changed := true; changed; {
		changed = false
		for i := range toks {
			t := &toks[i]
			if t.core == "*" || t.core == "" {
				continue
			}
			prev := i > 0 && toks[i-1].num
			next := i+1 < len(toks) && toks[i+1].num
			if (prev && unitWords[t.core]) || ((prev || next) && calendarWords[t.core]) {
				t.unit = prev && unitWords[t.core]
				t.core, t.num = "*", true
				changed = true
			}
		}
	}
	joinRestatements(toks)
	out := make([]byte, 0, len(s))
	var startsArr [32]int
	starts := startsArr[:0] // where each word of out starts
	letters, lastStar := false, false
	for _, t := range toks {
		star := t.pre == "" && t.post == "" && t.core == "*"
		if star && lastStar {
			continue
		}
		lastStar = star
		if len(out) > 0 {
			out = append(out, ' ')
		}
		starts = append(starts, len(out))
		out = append(append(append(out, t.pre...), t.core...), t.post...)
		out, starts = collapseRepeat(out, starts)
		if !letters && (hasLetter(t.pre) || hasLetter(t.core) || hasLetter(t.post)) {
			letters = true
		}
	}
	if !letters {
		return ""
	}
	return string(out)
}

// joinRestatements joins to a masked number and its unit the bracketed
// group right after them that is one too (a masked number and a unit word),
// which restates the quantity in other units ("1,190 bytes (1.16 KB)" is
// one value).
func joinRestatements(toks []templateToken) {
	for i := 1; i < len(toks); i++ {
		prev := toks[i-1]
		if !prev.unit || prev.post != "" || toks[i].pre != "(" || !toks[i].num {
			continue
		}
		j := i
		for j < len(toks) && toks[j].core == "*" && (j == i || toks[j].pre == "") && !strings.HasPrefix(toks[j].post, ")") && toks[j].post == "" {
			j++
		}
		if j == len(toks) || j == i || !toks[j].unit || (j > i && toks[j].pre != "") || !strings.HasPrefix(toks[j].post, ")") {
			continue
		}
		toks[i].pre = ""
		toks[j].post = toks[j].post[1:]
		for k := i; k <= j; k++ {
			toks[k].num, toks[k].unit = true, false // one restatement, not a chain
		}
		i = j
	}
}

// collapseRepeat drops the last block of one to three words of out (its
// words start at starts) when the block holds a mask and repeats the block
// just before it: a list of values is one value ("blk_* blk_* blk_*",
// "node * <ok> node * <ok>").
func collapseRepeat(out []byte, starts []int) ([]byte, []int) {
	word := func(i int) []byte {
		if i+1 < len(starts) {
			return out[starts[i] : starts[i+1]-1]
		}
		return out[starts[i]:]
	}
	n := len(starts)
	for k := 1; k <= 3 && 2*k <= n; k++ {
		same, star := true, false
		for x := 0; x < k && same; x++ {
			a, b := word(n-2*k+x), word(n-k+x)
			same = string(a) == string(b)
			star = star || bytes.IndexByte(a, '*') >= 0
		}
		if same && star {
			return out[:starts[n-k]-1], starts[:n-k]
		}
	}
	return out, starts
}

// emptyPair reports whether a token is an empty quoted or bracketed value
// ("()", "”", `""`, "[]", "{}") and returns its two halves.
func emptyPair(pre, post string) (open, close string, ok bool) {
	f := pre + post
	f = strings.TrimRight(f, ",;:.!?")
	if len(f) != 2 {
		return "", "", false
	}
	switch f {
	case "()", "[]", "{}", "<>", `""`, "''", "``":
		return f[:1], f[1:] + (pre + post)[2:], true
	}
	return "", "", false
}

// templateToken is one white-space-separated token: the punctuation before
// and after it and its core, masked in place.
type templateToken struct {
	pre, core, post string
	num             bool // masked as a number, a time or a calendar word
	unit            bool // a unit word after a masked number
}

// unbracket writes each bracketed IPv6 address in a token
// ("[2001:db8::1]:443", "ip-[fd00::1]") as the digit "0", so that it is
// masked, brackets and port included, like an IPv4 address.
func unbracket(f string) string {
	for from := 0; ; {
		i := strings.IndexByte(f[from:], '[')
		if i < 0 {
			return f
		}
		i += from
		j := strings.IndexByte(f[i:], ']')
		if j < 0 {
			return f
		}
		if inner := f[i+1 : i+j]; strings.Count(inner, ":") >= 2 && isAddress(inner) {
			f = f[:i] + "0" + f[i+j+1:]
		}
		from = i + 1
	}
}

// startsNumber reports whether c starts with a digit or a signed digit.
func startsNumber(c string) bool {
	return isDigit(c[0]) || (c[0] == '-' || c[0] == '+') && len(c) > 1 && isDigit(c[1])
}

// splitToken splits a token into the punctuation before it, its core and
// the punctuation after it.
func splitToken(f string) (pre, core, post string) {
	i := 0
	for i < len(f) && strings.IndexByte(leadPunct, f[i]) >= 0 {
		i++
	}
	j := len(f)
	for j > i && strings.IndexByte(trailPunct, f[j-1]) >= 0 {
		j--
	}
	return f[:i], f[i:j], f[j:]
}

// The punctuation that surrounds a token's core. A leading "-" or "+" is a
// sign (or a flag's dashes) and a leading "/" starts a path: both belong to
// the core.
const (
	leadPunct  = "\"'`([{<,;"
	trailPunct = "\"'`)]}>,;:.!?"
)

// maskValue masks a token's core (or a value inside one): whole when its
// class varies, else the variable parts of a key=value pair, of a list or
// of a compound name.
func maskValue(c string) string {
	if c == "" || c == "*" || isCatalogueID(c) {
		return c
	}
	if wholeVariable(c) || isHostName(c) {
		return "*"
	}
	if hasByteIn(c, &listSeparators) {
		return maskList(c)
	}
	if i := strings.IndexByte(c, '='); i > 0 {
		if hostKeys[c[:i]] {
			if pre, core, post := splitToken(c[i+1:]); core != "" {
				return c[:i+1] + pre + "*" + post // rhost=host8.topspot.net
			}
		}
		return c[:i+1] + maskInner(c[i+1:])
	}
	if i := strings.IndexByte(c, ':'); i > 0 && i < len(c)-1 && c[i+1] != ':' && isKey(c[:i]) && !changedParts(c[:i]) {
		return c[:i+1] + maskInner(c[i+1:])
	}
	m, whole := maskParts(c)
	if m == c || hasByteIn(c, &brackets) || strings.Count(c, "/") > 1 {
		return m
	}
	if whole && strings.IndexByte(c, '/') < 0 && strings.Count(c, ".") >= 2 && !strings.Contains(c, "..") || strings.Contains(m, "-*") && strings.IndexByte(c, '_') < 0 {
		// A host, node or instance name with a number in it
		// (d211-116-254-214.rev.example.net, db-7, worker-12) or a
		// run of a job (nightly-ledger-export-29212038).
		return "*"
	}
	return m
}

// maskInner masks a value inside a token, keeping the punctuation around
// it (a quoted value of key="value").
func maskInner(v string) string {
	pre, core, post := splitToken(v)
	if core == "" {
		return v
	}
	return pre + maskValue(core) + post
}

// maskList masks each comma- or semicolon-separated part of c.
func maskList(c string) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(c); i++ {
		if i < len(c) && c[i] != ',' && c[i] != ';' {
			continue
		}
		b.WriteString(maskInner(c[start:i]))
		if i < len(c) {
			b.WriteByte(c[i])
		}
		start = i + 1
	}
	return b.String()
}

// isKey reports whether k is the key of a key:value pair: a name that
// starts with a letter.
func isKey(k string) bool {
	r, _ := utf8.DecodeRuneInString(k)
	if !unicode.IsLetter(r) {
		return false
	}
	for _, r := range k {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.' && r != '-' {
			return false
		}
	}
	return true
}

// partSeparators split a compound name into parts.
const partSeparators = "-_./@#[]()"

// byteSet marks bytes; the sets below are the ASCII strings they are
// named after, tested with a table lookup per byte rather than
// strings.ContainsAny's search of the set for each byte of a short token.
// They are never modified.
type byteSet [256]bool

var (
	partSeparatorSet = byteSetOf(partSeparators)
	listSeparators   = byteSetOf(",;")
	brackets         = byteSetOf("[]()")
)

func byteSetOf(chars string) byteSet {
	var set byteSet
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

// hasByteIn reports whether s holds a byte of set (strings.ContainsAny for
// a set of ASCII bytes: no other byte of s can be one of them).
func hasByteIn(s string, set *byteSet) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

// maskParts masks the variable parts of a compound name (a sign before a
// masked part included) and writes a run of masked parts and the
// separators between them as one "*"; whole reports whether a part was
// masked whole (not only an instance number: "db-7" but not "eth0").
func maskParts(c string) (m string, whole bool) {
	if !hasByteIn(c, &partSeparatorSet) {
		if variablePart(c) {
			return "*", true
		}
		return instanceStem(c), false
	}
	var b strings.Builder
	b.Grow(len(c))
	star := false // the output ends with a "*" and separators after it
	pending := "" // separators since the last part
	start := 0
	for i := 0; i <= len(c); i++ {
		if i < len(c) && !partSeparatorSet[c[i]] {
			continue
		}
		part := c[start:i]
		switch {
		case part == "":
		case variablePart(part) || part == "*" || isOrdinal(part):
			whole = true
			if star {
				pending = ""
			} else {
				if len(pending) > 1 { // a sign after a separator: blk_-123
					pending = strings.TrimRight(pending, "-+")
				}
				b.WriteString(pending)
				b.WriteByte('*')
				pending = ""
				star = true
			}
		default:
			b.WriteString(pending)
			b.WriteString(instanceStem(part))
			pending, star = "", false
		}
		if i < len(c) {
			pending += c[i : i+1]
		}
		start = i + 1
	}
	b.WriteString(pending)
	return b.String(), whole
}

// changedParts reports whether maskParts masks anything in c.
func changedParts(c string) bool {
	m, _ := maskParts(c)
	return m != c
}

// variablePart reports whether one part of a compound name varies: it
// starts with a digit, is an IPv6 address, a hex id, or holds more than
// five digits.
func variablePart(p string) bool {
	if p == "" {
		return false
	}
	if isDigit(p[0]) || strings.Count(p, ":") >= 2 && isAddress(p) {
		return true
	}
	digits := countDigits(p)
	return digits > 5 || isHexID(p)
}

// instanceStem masks the instance number of a name made of letters and
// then digits, keeping the letters, which name the kind of thing: "eth0"
// and "eth1" are "eth*", "cpu3" is "cpu*", "cn304" is "cn*", while "wlan0"
// stays another kind. Names of kinds that end in digits (kindNames: ipv4,
// sha256, ext4, s3…) and catalogue ids (T1059, CVE-…) stay whole.
func instanceStem(p string) string {
	i := len(p)
	for i > 0 && isDigit(p[i-1]) {
		i--
	}
	if i == len(p) || i == 0 || !asciiLetters(p[:i]) || kindNames[p] || isCatalogueID(p) {
		return p
	}
	return p[:i] + "*"
}

// isOrdinal reports whether a part of a compound name is one letter and
// digits, a position in a grid (rack "A3" of "Thunderbird_A3", slot
// "J10"): masked whole, letter included. A "v" and digits is a version
// (org.apache.hadoop.mapreduce.v2): only its number is masked.
func isOrdinal(p string) bool {
	return len(p) >= 2 && p[0] >= 'a' && p[0] <= 'z' && p[0] != 'v' && countDigits(p) == len(p)-1 && !kindNames[p] && !isCatalogueID(p)
}

func asciiLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// isCatalogueID reports whether c is the id of a catalogued thing, which
// names a detection, never an instance: a CVE, CWE or CAPEC id, a GitHub
// advisory, a MITRE ATT&CK technique (T1059, T1059.001), tactic, group,
// software, mitigation or data source.
func isCatalogueID(c string) bool {
	for _, p := range []string{"cve-", "cwe-", "capec-", "ghsa-"} {
		if strings.HasPrefix(c, p) && len(c) > len(p) {
			return true
		}
	}
	stem := 0
	for stem < len(c) && stem < 2 && c[stem] >= 'a' && c[stem] <= 'z' {
		stem++
	}
	switch c[:stem] {
	case "t", "ta", "s", "g", "m", "ds":
	default:
		return false
	}
	rest := c[stem:]
	if len(rest) == 8 && rest[4] == '.' && c[:stem] == "t" {
		rest = rest[:4] + rest[5:]
	}
	return (len(rest) == 4 || len(rest) == 7) && countDigits(rest) == len(rest)
}

// isHostName reports whether c is a dotted host name: letters, digits and
// hyphens in labels joined by single dots, ending in a generic top-level
// domain (or a local one), or in a two-letter country domain after two
// dots or more under a second-level domain (edu.hk, co.uk), so that the
// reverse-DNS names of code (com.apple.iokit.io80211family,
// mapred.task.id) stay.
func isHostName(c string) bool {
	c = strings.TrimPrefix(c, "*.") // a wildcard certificate's name
	dots := strings.Count(c, ".")
	if dots == 0 || c[0] == '.' || c[len(c)-1] == '.' || strings.Contains(c, "..") {
		return false
	}
	for i := 0; i < len(c); i++ {
		if ch := c[i]; (ch < 'a' || ch > 'z') && !isDigit(ch) && ch != '-' && ch != '.' {
			return false
		}
	}
	rest, tld := c[:strings.LastIndexByte(c, '.')], c[strings.LastIndexByte(c, '.')+1:]
	if hostDomains[tld] {
		return true
	}
	second := rest[strings.LastIndexByte(rest, '.')+1:]
	return dots >= 2 && len(tld) == 2 && asciiLetters(tld) && secondLevelDomains[second]
}

// wholeVariable reports whether a token's core is of a varying class and is
// masked whole.
func wholeVariable(c string) bool {
	switch c0 := c[0]; {
	case isDigit(c0):
		return true
	case (c0 == '-' || c0 == '+') && len(c) > 1 && isDigit(c[1]):
		return true
	case c0 == '/' || c0 == '~' && strings.HasPrefix(c, "~/") || c0 == '.' && (strings.HasPrefix(c, "./") || strings.HasPrefix(c, "../")):
		return true
	case len(c) > 2 && c[1] == ':' && c[2] == '\\':
		return true
	}
	if strings.Contains(c, "://") {
		return true
	}
	if at := strings.IndexByte(c, '@'); at > 0 && strings.IndexByte(c[at:], '.') > 1 && !strings.ContainsAny(c[:at], "/:") {
		return true
	}
	if colons := strings.Count(c, ":"); colons >= 2 && isAddress(c) || colons == 1 && isHostPort(c) {
		return true
	}
	if isUUID(c) {
		return true
	}
	if isHexID(c) {
		return true
	}
	return strings.Count(c, "-") >= 2 && podSuffix.MatchString(c)
}

// isAddress reports whether c is written like an IPv6 or MAC address: hex
// digits, colons and dots only, with a digit or a "::".
func isAddress(c string) bool {
	digit := false
	for i := 0; i < len(c); i++ {
		switch ch := c[i]; {
		case isDigit(ch):
			digit = true
		case ch >= 'a' && ch <= 'f', ch == ':', ch == '.', ch == '%':
		default:
			return false
		}
	}
	return digit || strings.Contains(c, "::")
}

// isHostPort reports whether c is a dotted host name and a port
// ("db.example.com:5432", "csdnimg.cn:80").
func isHostPort(c string) bool {
	host, port, _ := strings.Cut(c, ":")
	return strings.IndexByte(host, '.') > 0 && port != "" && countDigits(port) == len(port)
}

// isUUID reports whether c is written as a UUID: five groups of 8, 4, 4, 4
// and 12 hex digits.
func isUUID(c string) bool {
	if len(c) != 36 {
		return false
	}
	for i := 0; i < len(c); i++ {
		switch i {
		case 8, 13, 18, 23:
			if c[i] != '-' {
				return false
			}
		default:
			if !isHex(c[i]) || c[i] >= 'A' && c[i] <= 'F' {
				return false
			}
		}
	}
	return true
}

// isHexID reports whether p is a hex id: 8 hex digits or more (no word
// of eight letters or more is spelt with a to f alone: "ffffffff" is a
// mask).
func isHexID(p string) bool {
	if len(p) < 8 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if !isDigit(p[i]) && (p[i] < 'a' || p[i] > 'f') {
			return false
		}
	}
	return true
}

// routeShape masks the variable segments of an HTTP request's path and its
// query, keeping the route's other segments.
func routeShape(p string) string {
	query := ""
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p, query = p[:i], p[i:i+1]+"*"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s != "" && s != "*" && (wholeVariable(s) || changedParts(s)) {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/") + query
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// httpMethods are the request methods after which a path keeps its route
// shape.
var httpMethods = setOf("get", "head", "post", "put", "delete", "patch", "options", "connect", "trace")

// nameKeys are the words after which a word names an account ("invalid
// user *", "session opened for user *", when one of accountLeads comes
// before them): that word is masked whatever it is. (A user=NAME pair keeps its value, as any key=value pair does.)
var nameKeys = setOf("user", "username", "ruser", "login", "account")

// accountLeads are the words before "user" that make the next word an
// account's name ("for user *", "invalid user *"); elsewhere "user" may
// qualify a noun ("user uploads failing").
var accountLeads = setOf("for", "invalid", "illegal", "unknown", "authenticating", "new", "deleted", "locked")

// notNames are the words that follow "user" without being its name.
var notNames = setOf("not", "from", "by", "is", "was", "has", "in", "for", "to", "unknown", "and", "or", "session", "name", "id", "*")

// kindNames are names that end in digits and name a kind of thing (an
// algorithm, protocol, standard, format or architecture), not an instance.
var kindNames = setOf("sha1", "sha2", "sha3", "sha224", "sha256", "sha384", "sha512", "md4", "md5", "x509", "ed25519", "ed448",
	"aes128", "aes192", "aes256", "rsa1024", "rsa2048", "rsa4096", "p256", "p384", "p521", "curve25519", "x25519", "chacha20", "poly1305",
	"ipv4", "ipv6", "icmpv6", "http1", "http2", "http3", "h2", "h3", "tlsv1", "sslv2", "sslv3", "snmpv2", "snmpv3", "smb1", "smb2", "smb3", "nfsv3", "nfsv4",
	"utf8", "utf16", "utf32", "iso8859", "base32", "base64", "crc32", "crc64", "adler32", "fat32", "ext2", "ext3", "ext4", "bzip2", "mp3", "mp4", "h264", "h265",
	"x86", "x64", "i386", "i686", "amd64", "arm64", "aarch64", "armv7", "win32", "win64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
	"s3", "ec2", "gpt4", "python2", "python3", "php7", "php8", "log4j2", "oauth2", "ssh1", "ssh2", "m2m", "l2", "l3", "l4", "l7")

// hostDomains are the top-level domains that end a host name on their own.
var hostDomains = setOf("com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "io", "local", "lan", "internal", "localdomain", "arpa", "corp", "home")

// secondLevelDomains are the labels under a country domain that make a
// name a host ("cuhk.edu.hk", "omantel.net.om"); other names ending in two
// letters may be code ("mapred.task.id").
var secondLevelDomains = setOf("com", "co", "net", "org", "edu", "ac", "gov", "or", "ne", "go", "mil")

// hostKeys are the keys whose value names a host: masked whatever it is
// ("rhost=host8", "host: db1"). An account's key keeps its value
// ("user=root" and "user=guest" are two events in the data, as a word
// value of any key=value pair).
var hostKeys = setOf("rhost", "host", "hostname", "remote_host", "client_host")

// unitWords are the units that join a masked number written before them.
var unitWords = setOf(
	"b", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "k", "m", "g", "t",
	"ns", "us", "µs", "ms", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes",
	"h", "hr", "hrs", "hour", "hours", "d", "day", "days", "w", "week", "weeks", "%",
	"byte", "bytes", "bit", "bits", "kbytes", "mbytes", "gbytes",
)

// calendarWords are the month, weekday, time-zone and am/pm words of a
// timestamp: masked when a masked token stands beside them ("may" alone is
// a word).
var calendarWords = setOf(
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
	"january", "february", "march", "april", "june", "july", "august", "september", "october", "november", "december",
	"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
	"utc", "gmt", "z", "cet", "cest", "eet", "eest", "wet", "west", "bst", "ist", "jst", "kst", "pst", "pdt", "mst", "mdt", "cst", "cdt", "est", "edt",
	"am", "pm",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

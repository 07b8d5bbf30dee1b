package gen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/leanovate/gopter"
	gg "github.com/leanovate/gopter/gen"
)

// TemplateSlot is one place of an event's title: a constant word (one
// value) or a variable of one token class (several values, each a
// rendering).
type TemplateSlot struct {
	Class  string
	Values []string
}

// Variable reports whether the slot varies between renderings.
func (s TemplateSlot) Variable() bool { return len(s.Values) > 1 }

// TemplateSlots returns the slots event titles are built from: constant
// words, and a variable of every token class the template masks (numbers,
// signed numbers, numbers with units, durations, IPv4 with and without a
// port, IPv6 (bracketed with a port too), URLs, paths, e-mail addresses,
// hex ids, UUIDs, Deployment pod names, CronJob runs, host names with an
// ordinal, dotted host names with a port, timestamps in syslog, ctime, RFC
// 3339 and "27 Dec 2018" forms, the value of key=value, key:value and
// "key: value" pairs, a quoted number or path, an instance number (eth0,
// cn304), a grid position (Thunderbird_A3), a dotted host name (also as
// the value of rhost=), an empty or bracketed value, a size restated in
// other units, a bounded duration ("<1 sec"), a list of ids, a namespace's
// name, a sudo line's account, the account between "for" and "from" and
// the value of "host:").
func TemplateSlots() []TemplateSlot {
	w := func(word string) TemplateSlot { return TemplateSlot{Class: "word", Values: []string{word}} }
	v := func(class string, values ...string) TemplateSlot { return TemplateSlot{Class: class, Values: values} }
	return []TemplateSlot{
		w("disk"), w("connection"), w("refused"), w("replica"), w("eth0"), w("reason"), w("state"), w("=>"), w("(instance"), w("backup"),
		v("number", "0", "7", "42", "1893", "65535", "3.14", "1,120"),
		v("signed number", "-5", "+3", "5", "-0.25", "+12"),
		v("number with unit", "12ms", "3.5GB", "91%", "128.0M", "7KiB", "250us", "0.2s"),
		v("number and unit word", "1.09 KB", "120 B", "5 days", "1 day", "30 s", "2 hours"),
		v("duration", "1h30m", "5m30s", "250ms", "2h", "45s"),
		v("ipv4", "10.0.0.1", "192.168.33.1", "203.0.113.9", "127.0.0.1"),
		v("ipv4 and port", "10.0.0.1:9100", "172.16.0.4:443", "192.168.1.20:6379"),
		v("ipv6", "fe80::abcd", "2001:db8::1", "::1", "[2001:db8::1]:443", "0:0:0:0:0:0:0:1"),
		v("url", "https://shop.example.com/health", "http://10.0.0.1:9090/metrics", "https://hooks.example.org/v1/abc?x=1"),
		v("path", "/var/lib/mysql/ibdata1", "/tmp/kafka-logs", "./ib_logfile0", "~/.ssh/authorized_keys", `c:\windows\temp`),
		v("email", "ops@example.com", "alice.smith@corp.example.org", "a+b@mail.example.net"),
		v("hex id", "deadbeefcafebabe", "5ffead27", "0x15dabf8d4140000", "0x1f", "54fadb412c4e40cdbaed9335e4c35a9e"),
		v("uuid", "123e4567-e89b-12d3-a456-426614174000", "bf8c824d-f099-4433-a41e-e3da7578262e"),
		v("pod", "checkout-7d9f8b6c5-x2x9z", "checkout-bcdfgh-xkzwq", "etl-worker-5c4b3a291-k8j7h"),
		v("job run", "nightly-ledger-export-29212038", "nightly-ledger-export-29333256"),
		v("host ordinal", "db-7", "web-12", "cache-3", "worker-25"),
		v("dotted host and port", "db.example.com:5432", "proxy.cse.example.edu:5070", "csi.gstatic.com:443"),
		v("syslog timestamp", "Feb 21 21:54:44", "Dec  3 04:00:01", "May 30 12:23:52"),
		v("ctime timestamp", "Tue Jan 5 10:00:00 2026", "Sun Jul 17 23:21:54 2005", "Sat Jun 18 02:08:12 2005"),
		v("rfc3339 timestamp", "2026-01-01T09:00:00Z", "2017-07-31T13:36:42.585+02:00", "2017-07-31 13:36:42.585 CEST"),
		v("day month year", "27 Dec 2018 11:19:18.874", "1 May 2020 00:00:00"),
		v("key=number", "pid=4974", "pid=1", "pid=65535"),
		v("key:number", "onExtend:1514038530000", "onExtend:7"),
		v("key: value", "status: 200", "status: 503", "status: 0"),
		v("key = signed", "boot = -5", "boot = 5", "boot = +12"),
		v("key=address", "rhost=10.0.0.1", "rhost=d211-116-254-214.rev.example.net", "rhost=2001:db8::1"),
		v("quoted number", `"4411"`, `"7"`, `"0.5"`),
		v("quoted path", `'/tmp/kafka-logs'`, `'/var/log/secure'`),
		v("bracketed pid", "sshd[3402]:", "sshd[1]:", "sshd[65535]:"),
		v("account after for user", "for user root", "for user alice", "for user svc_backup"),
		v("account after invalid user", "invalid user root", "invalid user alice", "invalid user oracle"),
		v("instance number", "eth0", "eth1", "eth12"),
		v("node number", "cn304", "cn7", "cn1024"),
		v("grid position", "[Thunderbird_A3]", "[Thunderbird_C2]", "[Thunderbird_B10]"),
		v("host name", "shop.example.com", "host8.topspot.net", "*.corp.example.org", "proxy.cse.cuhk.edu.hk", "authorMacBook-Pro.local"),
		v("key=host name", "rhost=massive.merukuru.org", "rhost=zummit.com", "rhost=10.0.0.1"),
		v("empty or bracketed value", "()", "(host8.topspot.net)", "(10.0.0.1)"),
		v("empty or quoted value", `""`, `"4411"`, `"/tmp/kafka-logs"`),
		v("size restated", "1190 bytes (1.16 KB)", "815 bytes", "0 bytes", "6274 bytes (6.12 KB)"),
		v("bounded duration", "<1 sec", "00:02", "3 s", ">5 s"),
		v("list of ids", "blk_-857 blk_-912 blk_876", "blk_-514", "blk_1 blk_2"),
		v("namespace name", "in namespace shop", "in namespace payments", "in namespace ledger-export"),
		v("sudo account", "sudo: carol :", "sudo: svc_backup :", "sudo: alice :"),
		v("account between for and from", "for alice from", "for root from", "for svc_backup from"),
		v("value of a host key", "host: db1", "host: alpha", "host: web-7.example.com"),
	}
}

// TemplateCase is an event title's shape (indexes into TemplateSlots) and
// the values of two renderings (indexes into each slot's values, cycled).
type TemplateCase struct {
	Shape []int
	A, B  []int
}

func (c TemplateCase) render(values []int) string { return strings.Join(c.pieces(values), " ") }

// pieces returns the rendered slots, the leading constant word first.
func (c TemplateCase) pieces(values []int) []string {
	slots := TemplateSlots()
	parts := []string{"event"} // a constant word: every title names something
	for i, s := range c.Shape {
		slot := slots[s%len(slots)]
		k := 0
		if i < len(values) {
			k = values[i]
		}
		parts = append(parts, slot.Values[k%len(slot.Values)])
	}
	return parts
}

// First renders the shape with values A.
func (c TemplateCase) First() string { return c.render(c.A) }

// Second renders the shape with values B.
func (c TemplateCase) Second() string { return c.render(c.B) }

// Classes lists the classes of the shape's variable slots.
func (c TemplateCase) Classes() []string {
	slots := TemplateSlots()
	var out []string
	for _, s := range c.Shape {
		if slot := slots[s%len(slots)]; slot.Variable() {
			out = append(out, slot.Class)
		}
	}
	return out
}

// TemplateCaseGen generates event shapes of up to 8 slots and two
// renderings of each.
func TemplateCaseGen() gopter.Gen {
	n := len(TemplateSlots())
	return gg.Struct(reflect.TypeOf(TemplateCase{}), map[string]gopter.Gen{
		"Shape": SliceUpTo(8, Index(n, 0), reflect.TypeOf(0)),
		"A":     SliceUpTo(8, Index(8, 0.2), reflect.TypeOf(0)),
		"B":     SliceUpTo(8, Index(8, 0.2), reflect.TypeOf(0)),
	})
}

// TemplateContrast is one of the constructs that name an event: two
// spellings that must give two templates.
type TemplateContrast struct {
	Kind   string
	First  string
	Second string
}

// TemplateContrasts returns the constructs of DESIGN §4 that name an
// event: a constant word, the key of a key=value pair (and a word value of
// one, an account's included), a quoted word, an HTTP method before the
// same route, the route's shape, the kind of a numbered name (eth0, wlan0),
// a kind that ends in digits (ipv4, sha256), a catalogue id (ATT&CK
// technique, CVE), the word before a dot leader, a reverse-DNS code name,
// and the words the account, namespace and host rules must leave alone: a
// word after "user" without a lead ("user uploads failing"), a word after
// "for user" that names no account ("not"), a word after "for" not
// followed by "from", a word after "by".
func TemplateContrasts() []TemplateContrast {
	return []TemplateContrast{
		{"constant word", "restarted", "stopped"},
		{"constant word", "primary", "replica"},
		{"key of key=value", "ambient=30", "voltage=30"},
		{"key of key=value", "pid=4974", "tid=4974"},
		{"key of key:value", "onExtend:1514038530000", "onStandStepChanged:1514038530000"},
		{"key of key: value", "status: 200", "len: 200"},
		{"word value of key = value", "reason = AuthFail:0x2c", "reason = AssocFail:0x2c"},
		{"word value of key=value", "result=success", "result=failure"},
		{"quoted word", "'Active'", "'Inactive'"},
		{"quoted word", `"users"`, `"orders"`},
		{"http method", `"GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1"`, `"POST /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1"`},
		{"http method", `"HEAD /healthz HTTP/1.1"`, `"DELETE /healthz HTTP/1.1"`},
		{"http route", `"GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1"`, `"GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/os-server-external-events HTTP/1.1"`},
		{"kind of a numbered name", "eth0", "wlan0"},
		{"kind ending in digits", "ipv4", "ipv6"},
		{"kind ending in digits", "sha256", "sha512"},
		{"catalogue id", "T1059.001", "T1059.003"},
		{"catalogue id", "CVE-2021-42278", "CVE-2021-42287"},
		{"word before a dot leader", "dcbf.........0", "icbi.........0"},
		{"code name with a country-like ending", "mapred.task.id", "mapred.job.id"},
		{"code name with a numbered part", "org.apache.hadoop.mapreduce.v2.app.JobEventType", "org.apache.hadoop.mapreduce.v2.app.TaskEventType"},
		{"word value of an account key", "user=root", "user=guest"},
		{"word after user without a lead", "user uploads", "user downloads"},
		{"word after user without a lead", "backup user quota", "backup user session"},
		{"word after for user that names no account", "for user not", "for user by"},
		{"word after for not before from", "for uploads", "for downloads"},
		{"word after by", "by oom-killer", "by watchdog"},
	}
}

// ContrastCase is a rendering of an event shape (as in TemplateCase) with
// a contrast inserted at a position: First and Second differ only there.
type ContrastCase struct {
	Shape    []int
	Values   []int
	Contrast int
	At       int
}

func (c ContrastCase) render(second bool) string {
	parts := TemplateCase{Shape: c.Shape}.pieces(c.Values) // inserted between slots, never inside one
	ct := TemplateContrasts()[c.Contrast%len(TemplateContrasts())]
	word := ct.First
	if second {
		word = ct.Second
	}
	at := 1 + c.At%len(parts) // never before the leading constant word
	out := append(append(append([]string{}, parts[:at]...), word), parts[at:]...)
	return strings.Join(out, " ")
}

// First renders the case with the contrast's first spelling.
func (c ContrastCase) First() string { return c.render(false) }

// Second renders it with the second spelling.
func (c ContrastCase) Second() string { return c.render(true) }

// Kind names the contrast.
func (c ContrastCase) Kind() string {
	return TemplateContrasts()[c.Contrast%len(TemplateContrasts())].Kind
}

// ContrastCaseGen generates contrast cases.
func ContrastCaseGen() gopter.Gen {
	return gg.Struct(reflect.TypeOf(ContrastCase{}), map[string]gopter.Gen{
		"Shape":    SliceUpTo(6, Index(len(TemplateSlots()), 0), reflect.TypeOf(0)),
		"Values":   SliceUpTo(6, Index(8, 0.2), reflect.TypeOf(0)),
		"Contrast": Index(len(TemplateContrasts()), 0),
		"At":       Index(8, 0.2),
	})
}

// ValidTemplateIndexes checks that shape indexes are in range.
func ValidTemplateIndexes(shape []int) error {
	for _, s := range shape {
		if s < 0 || s >= len(TemplateSlots()) {
			return fmt.Errorf("slot %d out of range", s)
		}
	}
	return nil
}

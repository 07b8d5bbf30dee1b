package fingerprint

import "testing"

// templateBenchTitles are alert titles and log lines of the shapes Template
// meets: rule summaries, HTTP request lines, syslog lines, key=value logs.
var templateBenchTitles = []string{
	"Disk 91% full on db-7",
	"Pod checkout-7d9f8b6c5-x2x9z in namespace shop is crash looping (12 restarts)",
	`10.11.10.1 "GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1" status: 200 len: 1893 time: 0.2477829`,
	"Feb 21 21:54:44 localhost sshd[3402]: Accepted publickey for vagrant from 10.0.2.2 port 63673 ssh2",
	`level=warn msg="slow query" duration=1.2s rows=5512 table=orders`,
	"Probe https://shop.example.com/health failed with status 503",
	"Trace 123e4567-e89b-12d3-a456-426614174000 exceeded budget by 250ms",
	"MySQL restarted (instance 10.0.0.1:9104)",
}

func BenchmarkTemplate(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Template(templateBenchTitles[i%len(templateBenchTitles)])
	}
}

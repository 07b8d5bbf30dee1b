package detectcorpus

import (
	"regexp"
	"strconv"
	"strings"
)

// placeholder is a Falco output field: %proc.name, %proc.aname[2],
// %jevt.value[/requestObject/...].
var placeholder = regexp.MustCompile(`%([A-Za-z][A-Za-z0-9_.]*(?:\[[^\]]*\])?)`)

// containerOutput is what Falco's append_output adds to a syscall event's
// output in a container.
const containerOutput = " container_id=%container.id container_name=%container.name container_image_repository=%container.image.repository container_image_tag=%container.image.tag k8s_pod_name=%k8s.pod.name k8s_ns_name=%k8s.ns.name"

// falcoOutput expands a Falco rule's output template for an event: the
// rendered text (without Falco's time and priority prefix) and the
// output_fields of Falco's JSON output.
func falcoOutput(r Rule, e *event) (string, map[string]any) {
	tmpl := r.Output
	if e.container {
		tmpl += containerOutput
	}
	fields := map[string]any{"evt.time": e.time.UnixNano()}
	evtType := "execve"
	switch {
	case strings.Contains(tmpl, "%fd.sip") || strings.Contains(tmpl, "%fd.rip") || strings.Contains(tmpl, "%fd.sport"):
		evtType = "connect"
	case strings.Contains(tmpl, "%fd.name"):
		evtType = "openat"
	}
	text := placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := m[1:]
		v := falcoField(name, e, evtType)
		fields[name] = v
		switch v := v.(type) {
		case nil:
			return "<NA>"
		case string:
			return v
		case int:
			return strconv.Itoa(v)
		case int64:
			return strconv.FormatInt(v, 10)
		}
		return "<NA>"
	})
	return text, fields
}

// falcoField returns the value Falco gives a field for the event: a string,
// an int or int64, or nil for a field without value (Falco's <NA>).
func falcoField(name string, e *event, evtType string) any {
	arg := ""
	if i := strings.IndexByte(name, '['); i >= 0 {
		name, arg = name[:i], strings.TrimSuffix(name[i+1:], "]")
	}
	switch name {
	case "evt.time":
		return e.time.UnixNano()
	case "evt.time.iso8601":
		return e.time.Format("2006-01-02T15:04:05.000000000Z")
	case "evt.type":
		return evtType
	case "evt.num":
		return int64(e.pid)*1000 + int64(e.n)
	case "evt.res":
		return "SUCCESS"
	case "evt.args":
		return "res=0 path=" + e.file
	case "evt.arg.flags":
		return "O_RDONLY|O_CLOEXEC"
	case "evt.arg.mode":
		return "0755"
	case "evt.arg.cmd":
		return "PTRACE_ATTACH"
	case "evt.arg.fd":
		return 3
	case "evt.arg.uid":
		return 0
	case "evt.arg.path", "evt.arg.filename", "evt.arg.name", "evt.arg.target", "evt.arg.newpath", "evt.arg.linkpath":
		return e.file
	case "evt.arg.oldpath":
		return "/tmp/.staging"
	case "evt.plugininfo":
		return "source=" + e.srcIP
	case "proc.name":
		return e.proc
	case "proc.exepath", "proc.exe":
		return e.exe
	case "proc.cmdline":
		return e.cmdline
	case "proc.args":
		_, args, _ := strings.Cut(e.cmdline, " ")
		return args
	case "proc.pname":
		return e.pproc
	case "proc.pcmdline":
		return e.pcmdline
	case "proc.pexe", "proc.pexepath":
		return e.pexe
	case "proc.aname":
		if a := []string{e.proc, e.pproc, "containerd-shim", "systemd"}; atoi(arg) < len(a) {
			return a[atoi(arg)]
		}
		return nil // no such ancestor: Falco's <NA>
	case "proc.aexepath":
		return "/usr/bin/containerd-shim-runc-v2"
	case "proc.sname":
		return e.pproc
	case "proc.tty":
		if e.container {
			return 0
		}
		return 34816
	case "proc.cwd":
		return "/root/"
	case "proc.env":
		return "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin HOME=/root"
	case "proc.exe_ino.ctime", "proc.exe_ino.mtime":
		return e.time.Add(-90 * 1e9).UnixNano()
	case "proc.exe_ino.ctime_duration_proc_start":
		return int64(90e9)
	case "proc.pid", "proc.vpid", "thread.tid":
		return e.pid
	case "proc.ppid":
		return e.ppid
	case "user.name", "user.loginname":
		return e.user
	case "user.uid":
		return e.uid
	case "user.loginuid":
		if e.container {
			return -1
		}
		return e.uid
	case "group.gid":
		return e.uid
	case "group.name":
		return e.user
	case "thread.cap_effective", "thread.cap_permitted":
		return "CAP_CHOWN CAP_DAC_OVERRIDE CAP_SYS_ADMIN CAP_SYS_PTRACE"
	case "container.id":
		if e.container {
			return e.containerID
		}
		return "host"
	case "container.name":
		if e.container {
			return e.ctrName
		}
		return "host"
	case "container.image.repository":
		if e.container {
			return e.image
		}
		return nil
	case "container.image.tag":
		if e.container {
			return e.tag
		}
		return nil
	case "container.mounts":
		return "/var/run/docker.sock:/var/run/docker.sock::true:private"
	case "container.start_ts":
		return e.time.Add(-3600 * 1e9).UnixNano()
	case "k8s.ns.name":
		if e.container {
			return e.namespace
		}
		return nil
	case "k8s.pod.name":
		if e.container {
			return e.pod
		}
		return nil
	case "fd.name", "fd.nameraw":
		if evtType == "connect" {
			return e.dstIP + ":" + strconv.Itoa(e.srcPort) + "->" + e.srcIP + ":" + strconv.Itoa(e.dstPort)
		}
		return e.file
	case "fd.sip", "fd.rip", "fd.sip.name", "fd.rip.name":
		return e.srcIP
	case "fd.cip.name", "fd.lip.name":
		return e.dstIP
	case "fd.sport", "fd.rport":
		return e.dstPort
	case "fd.lport":
		return e.srcPort
	case "fd.l4proto":
		return "tcp"
	case "fd.type":
		if evtType == "connect" {
			return "ipv4"
		}
		return "file"
	case "ka.user.name":
		return e.user
	case "ka.target.namespace":
		return e.namespace
	case "ka.target.name", "ka.resp.name":
		return e.pod
	case "ka.target.resource":
		return "pods"
	case "ka.target.subresource":
		return "exec"
	case "ka.verb":
		return "create"
	case "ka.uri":
		return "/api/v1/namespaces/" + e.namespace + "/pods/" + e.pod + "/exec?command=sh&container=" + e.ctrName + "&stdin=true&tty=true"
	case "ka.uri.param":
		return "sh"
	case "ka.req.pod.containers.image", "ka.req.pod.ephemeralContainers.image", "ka.req.pod.initContainers.image":
		return e.image + ":" + e.tag
	case "ka.auth.decision":
		return "allow"
	case "ka.auth.reason":
		return `RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to User "` + e.user + `"`
	case "ka.response.code":
		return "201"
	case "ka.response.reason":
		return "Created"
	case "ka.req.binding.role":
		return "cluster-admin"
	case "ka.req.binding.subjects":
		return "(kind=User name=" + e.user + ")"
	case "ka.req.role.rules":
		return "(apiGroups=* resources=* verbs=*)"
	case "ka.req.service.ports":
		return "(port=" + strconv.Itoa(e.dstPort) + " nodePort=3" + strconv.Itoa(1000+e.n%900) + ")"
	case "ka.req.configmap.name":
		return "aws-auth"
	case "jevt.value", "jevt.obj":
		if strings.Contains(arg, "image") {
			return e.image + ":" + e.tag
		}
		if strings.Contains(arg, "name") {
			return "debugger-" + e.ctrName
		}
		return `[{"hostPath":{"path":"/"},"name":"host"}]`
	case "ct.user":
		return strings.SplitN(e.email, "@", 2)[0]
	case "ct.user.arn":
		return "arn:aws:iam::" + e.account + ":user/" + strings.SplitN(e.email, "@", 2)[0]
	case "ct.user.principalid":
		return "AIDA" + strings.ToUpper(e.account[:8]) + "EXAMPLE"
	case "ct.user.accountid":
		return e.account
	case "ct.region", "ct.request.availabilityzone":
		return e.region
	case "ct.srcip":
		return e.srcIP
	case "ct.id":
		return uuidOf("ct", e.account, strconv.Itoa(e.n))
	case "ct.error":
		return nil
	case "ct.name":
		return "ConsoleLogin"
	case "s3.bucket":
		return "acme-" + e.region + "-backups"
	case "json.value":
		return "i-0" + e.account[:8] + e.containerID + "f"
	case "github.user", "github.owner", "github.collaborator.name":
		return strings.SplitN(e.email, "@", 2)[0]
	case "github.org":
		return strings.SplitN(e.repo, "/", 2)[0]
	case "github.repo.name":
		return e.repo
	case "github.repo.url":
		return "https://github.com/" + e.repo
	case "github.collaborator.role":
		return "admin"
	case "github.webhook.id":
		return strconv.Itoa(400000000 + e.pid)
	case "github.webhook.type":
		return "repository"
	case "github.workflow.filename":
		return ".github/workflows/release.yml"
	case "github.diff.committed_secrets.desc":
		return "AWS access key"
	case "github.diff.committed_secrets.files":
		return "config/prod.env"
	case "github.diff.committed_secrets.lines":
		return "12"
	case "github.diff.committed_secrets.links":
		return "https://github.com/" + e.repo + "/blob/main/config/prod.env#L12"
	case "okta.actor.name", "okta.target.user.name":
		return e.email
	case "okta.client.ip":
		return e.srcIP
	case "okta.client.geo.country":
		return e.country
	case "okta.reason":
		return "INVALID_CREDENTIALS"
	case "okta.target.app.alternateid":
		return "acme_aws_sso"
	case "okta.target.group.name":
		return "Administrators"
	case "okta.mfa.deny.countlast", "okta.mfa.failure.countlast":
		return 3 + e.n%7
	}
	switch {
	case strings.HasPrefix(name, "ct.request.") || strings.HasPrefix(name, "ct.response."):
		return strings.TrimPrefix(strings.TrimPrefix(name, "ct.request."), "ct.response.") + "-" + e.account[:6]
	case name == "gcp.user":
		return e.email
	case name == "gcp.callerIP":
		return e.srcIP
	case name == "gcp.projectId":
		return e.project
	case name == "gcp.methodName":
		return "SetIamPolicy"
	case name == "gcp.serviceName":
		return "cloudresourcemanager.googleapis.com"
	case name == "gcp.userAgent":
		return "google-cloud-sdk gcloud/480.0.0"
	case strings.HasPrefix(name, "gcp."):
		return e.project + "-" + strings.ToLower(name[strings.LastIndexByte(name, '.')+1:])
	}
	return nil
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

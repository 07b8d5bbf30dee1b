package sender

import (
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// guardDuty reads Amazon GuardDuty findings as EventBridge delivers them
// (source aws.guardduty, detail-type "GuardDuty Finding", the finding in
// detail), posted by an API destination or carried by an SNS topic (the sns
// adapter opens the envelope), and a finding posted bare (the GetFindings
// shape). Field names are read in GuardDuty's camelCase and, leniently, in
// the PascalCase of Security Hub style exports.
//
// Rule is the finding type exactly as sent ("UnauthorizedAccess:EC2/SSHBruteForce"):
// GuardDuty's name for the detection. Service is the account and the
// resource type ("123456789012/Instance"): what the finding is about,
// without the instance, bucket or key that varies between firings of one
// detection; the instance id is the Host (an S3 bucket's name, an EKS
// cluster's name when there is no instance). Environment comes from a
// resource tag env, environment or stage.
//
// Severity is GuardDuty's number, mapped by its documented bands: 1.0–3.9
// Low (low), 4.0–6.9 Medium (medium), 7.0–8.9 High (high), 9.0–10.0
// Critical (critical); the band names themselves are read too.
//
// ID is "gd-" + the finding id. GuardDuty keeps one finding id for repeated
// occurrences of the same activity (it updates the finding's count and
// updatedAt), and a new finding gets a new id: the id names one episode, and
// an update is recognised as the same alert. An archived finding is
// resolved; every other is firing.
//
// Entities name who acted: the IAM user of the access key (user, user_type),
// the Kubernetes user, the container image, the API called, and the remote
// actor's network organisation (remote_org, from its ASN); addresses,
// instance ids and counts are evidence in the text, never entities.
func guardDuty() Sender {
	return Sender{
		Name: "guardduty", Display: "AWS GuardDuty (EventBridge)", Security: true, Episode: true,
		Match: func(v Value) bool {
			if guardDutyEvent(v) {
				return true
			}
			// A finding posted bare.
			arn, _ := v.First("arn", "Arn")
			t, _ := v.First("type", "Type")
			return strings.Contains(arn, ":guardduty:") && strings.Contains(arn, "/finding/") && t != "" &&
				(v.Has("severity") || v.Has("Severity"))
		},
		Map: func(v Value) ([]Event, error) {
			v = awsSNSMessage(v)
			f := v
			if guardDutyEvent(v) {
				f = v.Get("detail")
			}
			return []Event{guardDutyFinding(v, f)}, nil
		},
		Severity: guardDutySeverity,
		Levels:   []string{"1.0", "2.0", "3.9", "4.0", "5.0", "6.9", "7.0", "8.0", "8.9", "9.0", "10.0", "Low", "Medium", "High", "Critical"},
		Doc: Doc{
			Point: "an EventBridge rule {\"source\":[\"aws.guardduty\"],\"detail-type\":[\"GuardDuty Finding\"]} with an API destination http://HOST:9555/api/v1/alerts/guardduty, or an SNS topic target whose HTTPS subscription is that URL with ?token=TOKEN",
			Auth:  "API destination connection: Authorization: Bearer TOKEN (API key auth); SNS: ?token=TOKEN",
			Title: "detail.title", Severity: "detail.severity (1.0–3.9 low, 4.0–6.9 medium, 7.0–8.9 high, 9.0–10.0 critical)",
			Service: "detail.accountId + \"/\" + detail.resource.resourceType", Rule: "detail.type (the finding type)",
			ID:     "detail.id (the finding id; kept across GuardDuty's updates of the finding)",
			Source: "AWS GuardDuty user guide (EventBridge event format, finding format, severity levels; awsdocs, CC BY-SA 4.0 / MIT-0); findings written for openrecall in that format",
		},
	}
}

// guardDutyEvent reports whether v is an EventBridge GuardDuty finding event.
func guardDutyEvent(v Value) bool {
	return v.Get("source").String() == "aws.guardduty" && v.Get("detail-type").String() == "GuardDuty Finding" &&
		v.Get("detail").IsObject()
}

// guardDutySeverity maps GuardDuty's severity number, or its band's name,
// to a severity.
func guardDutySeverity(raw string) openrecall.Severity {
	raw = strings.TrimSpace(raw)
	if f, err := strconv.ParseFloat(raw, 64); err == nil {
		switch {
		case f >= 9:
			return openrecall.SeverityCritical
		case f >= 7:
			return openrecall.SeverityHigh
		case f >= 4:
			return openrecall.SeverityMedium
		case f >= 0:
			return openrecall.SeverityLow
		}
		return openrecall.SeverityUnknown
	}
	return Scale{"low": openrecall.SeverityLow, "medium": openrecall.SeverityMedium, "high": openrecall.SeverityHigh,
		"critical": openrecall.SeverityCritical}.Map(raw)
}

// guardDutyGet reads a finding path in camelCase, else in PascalCase.
func guardDutyGet(v Value, path string) Value {
	if x := v.Path(path); !x.IsNull() {
		return x
	}
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return v.Path(strings.Join(parts, "."))
}

// guardDutyStr reads the first non-blank scalar of the paths, and its path.
func guardDutyStr(v Value, paths ...string) (string, string) {
	for _, p := range paths {
		if s := strings.TrimSpace(guardDutyGet(v, p).String()); s != "" {
			return s, p
		}
	}
	return "", ""
}

// guardDutyActions are the action kinds of service.action and where each
// names its remote party.
var guardDutyActions = []string{"networkConnectionAction", "awsApiCallAction", "dnsRequestAction", "portProbeAction",
	"kubernetesApiCallAction", "rdsLoginAttemptAction", "kubernetesPermissionCheckedAction", "kubernetesRoleBindingDetails"}

func guardDutyFinding(ev, f Value) Event {
	var e Event
	field := func(p string) string {
		if guardDutyEvent(ev) {
			return "detail." + p
		}
		return p
	}
	if s, p := guardDutyStr(f, "title"); s != "" {
		e.Set(PartTitle, s, field(p))
	}
	if s, p := guardDutyStr(f, "type"); s != "" {
		e.Set(PartRule, s, field(p))
		if e.Title == "" {
			e.Set(PartTitle, s, field(p))
		}
	}
	if s, p := guardDutyStr(f, "severity"); s != "" {
		e.Set(PartSeverity, s, field(p))
	}
	if s, p := guardDutyStr(f, "id"); s != "" {
		e.SetID(field(p), "gd-", "", s)
	}
	account, accountField := guardDutyStr(f, "accountId")
	if account == "" {
		account, accountField = ev.Get("account").String(), "account"
	} else {
		accountField = field(accountField)
	}
	res := guardDutyGet(f, "resource")
	rtype, _ := guardDutyStr(res, "resourceType")
	switch {
	case account != "" && rtype != "":
		e.Set(PartService, account+"/"+rtype, accountField+"+"+field("resource.resourceType"))
	case account != "":
		e.Set(PartService, account, accountField)
	}
	region, _ := guardDutyStr(f, "region")
	if region == "" {
		region = ev.Get("region").String()
	}
	e.Timestamp = guardDutyGet(f, "updatedAt").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = guardDutyGet(f, "createdAt").Time()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = ev.Get("time").Time()
	}
	e.Status = openrecall.StatusFiring
	if archived, ok := guardDutyGet(f, "service.archived").Bool(); ok && archived {
		e.Status = openrecall.StatusResolved
	}

	// The resource: host, tags, entities.
	instance, _ := guardDutyStr(res, "instanceDetails.instanceId")
	bucket := ""
	for _, b := range guardDutyGet(res, "s3BucketDetails").Elements() {
		if n, _ := guardDutyStr(b, "name"); n != "" {
			bucket = n
			break
		}
	}
	cluster, _ := guardDutyStr(res, "eksClusterDetails.name", "ecsClusterDetails.name")
	e.Host = instance
	if e.Host == "" {
		e.Host = cloudWatchFirst(bucket, cluster)
	}
	for _, tags := range []Value{guardDutyGet(res, "instanceDetails.tags"), guardDutyGet(res, "eksClusterDetails.tags")} {
		for _, t := range tags.Elements() {
			k, _ := guardDutyStr(t, "key")
			val, _ := guardDutyStr(t, "value")
			if k == "" || val == "" {
				continue
			}
			switch strings.ToLower(k) {
			case "env", "environment", "stage":
				if e.Environment == "" {
					e.Set(PartEnvironment, val, field("resource.instanceDetails.tags."+k))
				}
			}
			e.Label("tag_"+k, val)
		}
	}
	user, _ := guardDutyStr(res, "accessKeyDetails.userName")
	e.Entity("user", user)
	userType, _ := guardDutyStr(res, "accessKeyDetails.userType")
	e.Entity("user_type", userType)
	k8sUser, _ := guardDutyStr(res, "kubernetesDetails.kubernetesUserDetails.username")
	e.Entity("kubernetes_user", k8sUser)
	image, _ := guardDutyStr(res, "containerDetails.image")
	if image == "" {
		for _, c := range guardDutyGet(res, "kubernetesDetails.kubernetesWorkloadDetails.containers").Elements() {
			if image, _ = guardDutyStr(c, "image"); image != "" {
				break
			}
		}
	}
	e.Entity("image", image)
	workload, _ := guardDutyStr(res, "kubernetesDetails.kubernetesWorkloadDetails.name")

	// The action: what was done and by whom.
	action := guardDutyGet(f, "service.action")
	actionType, _ := guardDutyStr(action, "actionType")
	var remoteIP, remotePort, localPort, country, org, api, domain, direction, protocol string
	for _, kind := range guardDutyActions {
		a := guardDutyGet(action, kind)
		if a.IsNull() {
			continue
		}
		remote := guardDutyGet(a, "remoteIpDetails")
		if remote.IsNull() {
			for _, p := range guardDutyGet(a, "portProbeDetails").Elements() {
				remote = guardDutyGet(p, "remoteIpDetails")
				if localPort == "" {
					localPort, _ = guardDutyStr(p, "localPortDetails.port")
				}
				break
			}
		}
		if remoteIP == "" {
			remoteIP, _ = guardDutyStr(remote, "ipAddressV4", "ipAddressV6")
			country, _ = guardDutyStr(remote, "country.countryName")
			org, _ = guardDutyStr(remote, "organization.asnOrg", "organization.org")
		}
		if api == "" {
			api, _ = guardDutyStr(a, "api", "verb")
		}
		if domain == "" {
			domain, _ = guardDutyStr(a, "domain")
		}
		if direction == "" {
			direction, _ = guardDutyStr(a, "connectionDirection")
		}
		if protocol == "" {
			protocol, _ = guardDutyStr(a, "protocol")
		}
		if remotePort == "" {
			remotePort, _ = guardDutyStr(a, "remotePortDetails.port")
		}
		if localPort == "" {
			localPort, _ = guardDutyStr(a, "localPortDetails.port")
		}
	}
	e.Entity("api", api)
	e.Entity("remote_org", org)

	e.Label("aws_account", account)
	e.Label("region", region)
	e.Label("resource_type", rtype)
	e.Label("action_type", actionType)
	if arn, _ := guardDutyStr(f, "arn"); arn != "" {
		e.Label("finding_arn", arn)
	}
	count, _ := guardDutyStr(f, "service.count")
	first, _ := guardDutyStr(f, "service.eventFirstSeen")
	last, _ := guardDutyStr(f, "service.eventLastSeen")
	desc, _ := guardDutyStr(f, "description")
	sev, _ := guardDutyStr(f, "severity")
	typ, _ := guardDutyStr(f, "type")
	accessKey, _ := guardDutyStr(res, "accessKeyDetails.accessKeyId")
	role, _ := guardDutyStr(f, "service.resourceRole")
	e.Text = JoinText(desc, Evidence(
		[2]string{"finding type", typ},
		[2]string{"severity", sev},
		[2]string{"account", account},
		[2]string{"region", region},
		[2]string{"resource type", rtype},
		[2]string{"resource role", role},
		[2]string{"instance", instance},
		[2]string{"bucket", bucket},
		[2]string{"cluster", cluster},
		[2]string{"workload", workload},
		[2]string{"image", image},
		[2]string{"user", user},
		[2]string{"user type", userType},
		[2]string{"access key", accessKey},
		[2]string{"kubernetes user", k8sUser},
		[2]string{"action", actionType},
		[2]string{"api", api},
		[2]string{"domain", domain},
		[2]string{"direction", direction},
		[2]string{"protocol", protocol},
		[2]string{"remote address", remoteIP},
		[2]string{"remote port", remotePort},
		[2]string{"local port", localPort},
		[2]string{"remote country", country},
		[2]string{"remote organisation", org},
		[2]string{"count", count},
		[2]string{"first seen", first},
		[2]string{"last seen", last},
	))
	return e
}

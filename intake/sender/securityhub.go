package sender

import (
	"strconv"
	"strings"

	"github.com/openrecall/openrecall"
)

// securityHub reads AWS Security Hub findings in the AWS Security Finding
// Format (ASFF): as EventBridge delivers them (source aws.securityhub,
// detail-type "Security Hub Findings - Imported" or "Security Hub Findings
// - Custom Action", the findings in detail.findings), posted by an API
// destination or carried by an SNS topic (the sns adapter opens the
// envelope); a finding posted bare; and the {"Findings": […]} of
// GetFindings and BatchImportFindings. Each finding is one event.
//
// Rule is GeneratorId exactly as sent: the product's rule, control or
// finding type that generated the finding ("arn:aws:securityhub:::ruleset/
// cis-aws-foundations-benchmark/v/1.2.0/rule/1.3", a GuardDuty finding
// type); a GuardDuty finding, whose generator is its detector (the same for
// every finding type), has Types[0] instead. Title is Title. Service is the account and the first resource's
// type ("111122223333/AwsEc2Instance"); the resource's id is the Host. The
// id is "ash-" + Id: ASFF keeps a finding's Id across its updates, so the id
// names one episode.
//
// Severity is Severity.Label (INFORMATIONAL, LOW, MEDIUM, HIGH, CRITICAL),
// else Severity.Normalized by ASFF's documented bands: 0 informational,
// 1–39 low, 40–69 medium, 70–89 high, 90–100 critical. A finding whose
// Workflow.Status is RESOLVED or SUPPRESSED, whose RecordState is ARCHIVED
// or whose Compliance.Status is PASSED is resolved; NOTIFIED is
// acknowledged; NEW is firing.
//
// Entities name who acted: the process (Process.Name), its parent, the IAM
// principal of an access key resource or an IAM user resource (user) and a
// container's image. Types in the TTPs namespace ("TTPs/Initial
// Access/…") name ATT&CK tactics: they are the label mitre_tactic.
func securityHub() Sender {
	return Sender{
		Name: "securityhub", Display: "AWS Security Hub (ASFF)", Security: true, Episode: true,
		Match: func(v Value) bool {
			return securityHubEvent(v) || asffFinding(v) || asffFindings(v.Get("Findings"))
		},
		Map: func(v Value) ([]Event, error) {
			v = awsSNSMessage(v)
			var findings []Value
			prefix := ""
			switch {
			case securityHubEvent(v):
				findings, prefix = v.Path("detail.findings").Elements(), "detail.findings[]."
			case asffFinding(v):
				findings = []Value{v}
			default:
				findings, prefix = v.Get("Findings").Elements(), "Findings[]."
			}
			out := make([]Event, 0, len(findings))
			for _, f := range findings {
				if asffFinding(f) {
					out = append(out, asffEvent(v, f, prefix))
				}
			}
			return out, nil
		},
		Severity: asffSeverity,
		Levels:   []string{"INFORMATIONAL", "LOW", "MEDIUM", "HIGH", "CRITICAL", "0", "1", "39", "40", "69", "70", "89", "90", "100"},
		Doc: Doc{
			Point:    "an EventBridge rule {\"source\":[\"aws.securityhub\"],\"detail-type\":[\"Security Hub Findings - Imported\"]} with an API destination http://HOST:9555/api/v1/alerts/securityhub, or an SNS topic target whose HTTPS subscription is that URL with ?token=TOKEN",
			Auth:     "API destination connection: Authorization: Bearer TOKEN (API key auth); SNS: ?token=TOKEN",
			Title:    "Title",
			Severity: "Severity.Label (INFORMATIONAL info, LOW, MEDIUM, HIGH, CRITICAL), else Severity.Normalized (0 info, 1–39 low, 40–69 medium, 70–89 high, 90–100 critical)",
			Service:  "AwsAccountId + \"/\" + Resources[0].Type",
			Rule:     "GeneratorId",
			ID:       "Id (kept across the finding's updates)",
			Source:   "AWS Security Hub user guide: EventBridge event formats and the AWS Security Finding Format (awsdocs, CC BY-SA 4.0); findings written for openrecall in that format",
		},
	}
}

// securityHubEvent reports whether v is an EventBridge Security Hub
// findings event.
func securityHubEvent(v Value) bool {
	return v.Get("source").String() == "aws.securityhub" &&
		strings.HasPrefix(v.Get("detail-type").String(), "Security Hub Findings") && v.Path("detail.findings").IsArray()
}

// asffFinding reports whether v is an ASFF finding: a schema version, the
// product's ARN, a generator, an id and a severity.
func asffFinding(v Value) bool {
	return v.Get("SchemaVersion").String() != "" && strings.Contains(v.Get("ProductArn").String(), ":securityhub:") &&
		v.Get("GeneratorId").String() != "" && v.Get("Id").String() != "" && v.Get("Severity").IsObject()
}

// asffFindings reports whether v is an array of ASFF findings.
func asffFindings(v Value) bool {
	return v.IsArray() && v.Len() > 0 && asffFinding(v.At(0))
}

// asffSeverity maps an ASFF severity label or normalized score.
func asffSeverity(raw string) openrecall.Severity {
	raw = strings.TrimSpace(raw)
	if n, err := strconv.ParseFloat(raw, 64); err == nil {
		switch {
		case n < 0 || n > 100:
			return openrecall.SeverityUnknown
		case n >= 90:
			return openrecall.SeverityCritical
		case n >= 70:
			return openrecall.SeverityHigh
		case n >= 40:
			return openrecall.SeverityMedium
		case n >= 1:
			return openrecall.SeverityLow
		}
		return openrecall.SeverityInfo
	}
	return Scale{"informational": openrecall.SeverityInfo, "low": openrecall.SeverityLow, "medium": openrecall.SeverityMedium,
		"high": openrecall.SeverityHigh, "critical": openrecall.SeverityCritical}.Map(raw)
}

func asffEvent(ev, f Value, prefix string) Event {
	var e Event
	e.Set(PartTitle, f.Get("Title").String(), prefix+"Title")
	if gen := f.Get("GeneratorId").String(); strings.Contains(gen, ":detector/") && f.Get("Types").At(0).String() != "" {
		// GuardDuty's generator is its detector, the same for every finding
		// type: the type names the detection.
		e.Set(PartRule, f.Get("Types").At(0).String(), prefix+"Types[0]")
	} else {
		e.Set(PartRule, gen, prefix+"GeneratorId")
	}
	if !e.Set(PartSeverity, f.Path("Severity.Label").String(), prefix+"Severity.Label") {
		e.Set(PartSeverity, f.Path("Severity.Normalized").String(), prefix+"Severity.Normalized")
	}
	e.SetID(prefix+"Id", "ash-", "", f.Get("Id").String())
	res := f.Get("Resources").At(0)
	account := f.Get("AwsAccountId").String()
	if rtype := res.Get("Type").String(); account != "" && rtype != "" {
		e.Set(PartService, account+"/"+rtype, prefix+"AwsAccountId+"+prefix+"Resources[0].Type")
	} else {
		e.Set(PartService, account, prefix+"AwsAccountId")
	}
	e.Host = res.Get("Id").String()
	e.Timestamp = f.Get("UpdatedAt").Time()
	if e.Timestamp.IsZero() {
		e.Timestamp = f.Get("CreatedAt").Time()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = ev.Get("time").Time()
	}
	switch {
	case f.Path("Workflow.Status").String() == "RESOLVED", f.Path("Workflow.Status").String() == "SUPPRESSED",
		f.Get("RecordState").String() == "ARCHIVED", f.Path("Compliance.Status").String() == "PASSED":
		e.Status = openrecall.StatusResolved
	case f.Path("Workflow.Status").String() == "NOTIFIED":
		e.Status = openrecall.StatusAcknowledged
	default:
		e.Status = openrecall.StatusFiring
	}

	e.Entity("process", f.Path("Process.Name").String())
	e.Entity("parent_process", f.Path("Process.ParentName").String())
	for _, r := range f.Get("Resources").Elements() {
		d := r.Get("Details")
		user, _ := d.First("AwsIamAccessKey.PrincipalName", "AwsIamAccessKey.UserName", "AwsIamUser.UserName")
		if user != "" && (e.Entities == nil || e.Entities["user"] == "") {
			e.Entity("user", user)
		}
		if img := d.Path("Container.ImageName").String(); img != "" && (e.Entities == nil || e.Entities["image"] == "") {
			e.Entity("image", img)
		}
		for k, val := range r.Get("Tags").Labels() {
			switch strings.ToLower(k) {
			case "env", "environment", "stage":
				if e.Environment == "" {
					e.Set(PartEnvironment, val, prefix+"Resources[].Tags."+k)
				}
			}
		}
	}

	var tactics []string
	types := f.Get("Types").Strings()
	for _, t := range types {
		parts := strings.Split(t, "/")
		if len(parts) >= 2 && parts[0] == "TTPs" && parts[1] != "" {
			tactics = append(tactics, parts[1])
		}
	}
	e.Label("mitre_tactic", strings.Join(tactics, ","))
	e.Label("finding_types", strings.Join(types, ","))
	product, _ := f.First("ProductName", "ProductFields.aws/securityhub/ProductName")
	e.Label("product", product)
	e.Label("aws_account", account)
	e.Label("region", f.Get("Region").String())
	e.Label("resource_type", res.Get("Type").String())
	e.Label("workflow_status", f.Path("Workflow.Status").String())
	e.Label("record_state", f.Get("RecordState").String())
	e.Link(openrecall.LinkSource, f.Get("SourceUrl").String())
	e.Link(openrecall.LinkRunbook, f.Path("Remediation.Recommendation.Url").String())

	e.Text = JoinText(f.Get("Description").String(), Evidence(
		[2]string{"generator", f.Get("GeneratorId").String()},
		[2]string{"product", product},
		[2]string{"types", strings.Join(types, ", ")},
		[2]string{"severity", cloudWatchFirst(f.Path("Severity.Label").String(), f.Path("Severity.Normalized").String())},
		[2]string{"account", account},
		[2]string{"resource", res.Get("Type").String() + " " + res.Get("Id").String()},
		[2]string{"process", f.Path("Process.Name").String()},
		[2]string{"compliance", f.Path("Compliance.Status").String()},
		[2]string{"workflow", f.Path("Workflow.Status").String()},
		[2]string{"remediation", f.Path("Remediation.Recommendation.Text").String()},
	))
	return e
}

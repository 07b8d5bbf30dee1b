package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// googleCloudMonitoring reads Google Cloud Monitoring webhook
// notifications (schema version "1.2"; older bodies without a version read
// the same): an incident of an alerting policy's condition.
//
// Rule is the policy's display name and the condition's display name,
// "policy_name / condition_name", exactly as sent: one policy holds several
// conditions, and each is its own check; when only one of them is sent it
// is the rule.
//
// Service comes from the labels that name the workload: the resource's
// user labels service or app (metadata.user_labels), else the monitored
// resource's label that names it — service_name (Cloud Run), module_id (App
// Engine), function_name (Cloud Functions), container_name (GKE), job_name,
// database_id (Cloud SQL), topic_id, subscription_id, bucket_name,
// backend_service_name, instance_group_name — else a policy user label
// service. A VM, pod or node (instance_id, pod_name, node_name, and the
// resource_display_name of a gce_instance) is the Host, never the service.
// Environment comes from the user labels env, environment or stage.
//
// Severity is the policy's severity (incident.severity: CRITICAL critical,
// ERROR high, WARNING medium); "No severity" is Google's word for none and
// reads as unknown unless a user label severity names one.
//
// ID is "gcp-" + incident_id: an incident is one firing of the condition on
// one resource, closed by the same id (Episode). Status: open is firing,
// acknowledged acknowledged, closed resolved.
func googleCloudMonitoring() Sender {
	scale := Scale{"critical": openrecall.SeverityCritical, "error": openrecall.SeverityHigh, "warning": openrecall.SeverityMedium}
	return Sender{
		Name: "google-cloud-monitoring", Display: "Google Cloud Monitoring", Security: false, Episode: true,
		Match: func(v Value) bool {
			inc := v.Get("incident")
			return inc.IsObject() && inc.Get("incident_id").String() != "" && inc.Get("state").IsString() &&
				(inc.Has("policy_name") || inc.Has("condition_name"))
		},
		Map: func(v Value) ([]Event, error) {
			return []Event{gcpIncident(v.Get("incident"))}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"CRITICAL", "ERROR", "WARNING"},
		Doc: Doc{
			Point: "a notification channel of type Webhook (token authentication), endpoint URL http://HOST:9555/api/v1/alerts/google-cloud-monitoring?token=TOKEN",
			Auth:  "?token=TOKEN in the endpoint URL (or the channel's basic authentication)",
			Title: "incident.summary, else documentation.subject, else policy_name", Severity: "incident.severity (CRITICAL, ERROR, WARNING; No severity is unknown)",
			Service: "metadata.user_labels service/app, else the resource label naming the workload (service_name, module_id, function_name, container_name, database_id, …)",
			Rule:    "incident.policy_name / incident.condition_name", ID: "incident.incident_id (one id per incident, open to closed)",
			Source: "Google Cloud Monitoring webhook schema 1.2 documented sample; captured payloads published in cloudforet-io/plugin-google-monitoring-mon-webhook (Apache-2.0); written for openrecall",
		},
	}
}

// gcpServiceLabels are the monitored resource labels that name a workload,
// in precedence order.
var gcpServiceLabels = []string{"service_name", "module_id", "function_name", "container_name", "job_name", "job_id",
	"database_id", "topic_id", "subscription_id", "bucket_name", "backend_service_name", "instance_group_name",
	"configuration_name", "revision_name"}

// gcpHostLabels are the monitored resource labels that name a host.
var gcpHostLabels = []string{"instance_id", "pod_name", "node_name", "host", "instance_name"}

func gcpIncident(inc Value) Event {
	var e Event
	policy := Rendered(inc.Get("policy_name").String())
	condition := Rendered(inc.Get("condition_name").String())
	if condition == "" {
		condition = Rendered(inc.Path("condition.displayName").String())
	}
	switch {
	case policy != "" && condition != "":
		e.Set(PartRule, policy+" / "+condition, "incident.policy_name+incident.condition_name")
	case policy != "":
		e.Set(PartRule, policy, "incident.policy_name")
	default:
		e.Set(PartRule, condition, "incident.condition_name")
	}
	if !e.Set(PartTitle, Rendered(inc.Get("summary").String()), "incident.summary") &&
		!e.Set(PartTitle, Rendered(inc.Path("documentation.subject").String()), "incident.documentation.subject") {
		e.Set(PartTitle, e.Rule, e.Origin[PartRule])
	}
	e.SetID("incident.incident_id", "gcp-", "", inc.Get("incident_id").String())
	state := inc.Get("state").String()
	e.Status = Status(state)
	if strings.EqualFold(state, "open") {
		e.Status = openrecall.StatusFiring
	}
	e.Timestamp = inc.Get("started_at").Time()
	if e.Status == openrecall.StatusResolved {
		if t := inc.Get("ended_at").Time(); !t.IsZero() {
			e.Timestamp = t
		}
	}

	sev := strings.TrimSpace(inc.Get("severity").String())
	if sev != "" && !strings.EqualFold(sev, "no severity") {
		e.Set(PartSeverity, sev, "incident.severity")
	}
	userLabels := inc.Path("metadata.user_labels")
	policyLabels := inc.Get("policy_user_labels")
	resLabels := inc.Path("resource.labels")
	resType := inc.Path("resource.type").String()
	for _, src := range []struct {
		labels Value
		field  string
		prefix string
	}{{userLabels, "incident.metadata.user_labels", "user_label_"}, {policyLabels, "incident.policy_user_labels", "policy_label_"}} {
		for _, k := range src.labels.Keys() {
			val := Rendered(src.labels.Get(k).String())
			switch strings.ToLower(k) {
			case "env", "environment", "stage":
				if e.Environment == "" {
					e.Set(PartEnvironment, val, src.field+"."+k)
				}
			case "severity":
				if e.Severity == "" {
					e.Set(PartSeverity, val, src.field+"."+k)
				}
			}
			e.Label(src.prefix+k, val)
		}
	}
	for _, k := range []string{"service", "app", "application"} {
		if e.Set(PartService, Rendered(userLabels.Get(k).String()), "incident.metadata.user_labels."+k) {
			break
		}
	}
	if e.Service == "" {
		for _, k := range gcpServiceLabels {
			if e.Set(PartService, Rendered(resLabels.Get(k).String()), "incident.resource.labels."+k) {
				break
			}
		}
	}
	if e.Service == "" {
		for _, k := range []string{"service", "app", "application"} {
			if e.Set(PartService, Rendered(policyLabels.Get(k).String()), "incident.policy_user_labels."+k) {
				break
			}
		}
	}
	for _, k := range gcpHostLabels {
		if h := Rendered(resLabels.Get(k).String()); h != "" {
			e.Host = h
			break
		}
	}
	if resType == "gce_instance" {
		if d := Rendered(inc.Get("resource_display_name").String()); d != "" {
			e.Host = d
		}
	}
	for _, k := range resLabels.Keys() {
		e.Label("resource_"+k, resLabels.Get(k).String())
	}
	e.Label("resource_type", resType)
	e.Label("project", inc.Get("scoping_project_id").String())
	e.Label("metric_type", inc.Path("metric.type").String())
	e.Label("condition", inc.Path("condition.name").String())

	metric := inc.Path("metric.displayName").String()
	if t := inc.Path("metric.type").String(); t != "" {
		metric = strings.TrimSpace(metric + " (" + t + ")")
	}
	var metricLabels []string
	ml := inc.Path("metric.labels")
	for _, k := range ml.Keys() {
		metricLabels = append(metricLabels, k+"="+ml.Get(k).String())
	}
	doc := inc.Get("documentation")
	docText := doc.Get("content").String()
	if doc.IsString() {
		docText = doc.String()
	}
	summary := inc.Get("summary").String()
	if summary == e.Title {
		summary = ""
	}
	e.Text = JoinText(Rendered(docText), summary, Evidence(
		[2]string{"policy", policy},
		[2]string{"condition", condition},
		[2]string{"state", state},
		[2]string{"metric", metric},
		[2]string{"metric labels", strings.Join(metricLabels, ", ")},
		[2]string{"filter", inc.Path("condition.conditionThreshold.filter").String()},
		[2]string{"threshold", inc.Get("threshold_value").String()},
		[2]string{"observed", inc.Get("observed_value").String()},
		[2]string{"resource", strings.TrimSpace(inc.Get("resource_type_display_name").String() + " " + inc.Get("resource_display_name").String())},
		[2]string{"resource name", inc.Get("resource_name").String()},
		[2]string{"project", inc.Get("scoping_project_id").String()},
		[2]string{"url", inc.Get("url").String()},
	))
	return e
}

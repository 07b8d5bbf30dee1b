package sender

import (
	"strings"

	"github.com/openrecall/openrecall"
)

// azureMonitor reads Azure Monitor alerts in the common alert schema
// (schemaId "azureMonitorCommonAlertSchema"), as an action group's webhook,
// Logic App or Function posts them.
//
// Rule is essentials.alertRule, the alert rule's name exactly as sent (the
// alertRuleID, when sent, is kept as a label): one rule may watch several
// resources, and is the same check on each.
//
// Service is the resource the alert is about when that resource is a
// workload: the last segment of the first alertTargetIDs entry (else the
// first configurationItems entry) for App Service sites, SQL databases,
// storage accounts, AKS clusters, Application Insights components and every
// other resource type. A virtual machine, a scale set, an Arc machine, and
// the computers a log search alert on a Log Analytics workspace reports
// (configurationItems) are hosts, not services: they are the Host, and
// the service is then empty, so one rule firing on two VMs is one alert.
// A custom property service (or app) wins over both; env, environment or
// stage in the custom properties is the environment.
//
// Severity: Sev0 (Critical) critical, Sev1 (Error) high, Sev2 (Warning)
// medium, Sev3 (Informational) low, Sev4 (Verbose) info; the five levels
// stay five, by rank.
//
// ID is "az-" + essentials.alertId, the alert instance: a new firing of the
// rule is a new instance (Episode), its resolution keeps the id. Status:
// monitorCondition Fired is firing, Resolved is resolved.
func azureMonitor() Sender {
	scale := Scale{"sev0": openrecall.SeverityCritical, "sev1": openrecall.SeverityHigh, "sev2": openrecall.SeverityMedium,
		"sev3": openrecall.SeverityLow, "sev4": openrecall.SeverityInfo,
		"0": openrecall.SeverityCritical, "1": openrecall.SeverityHigh, "2": openrecall.SeverityMedium,
		"3": openrecall.SeverityLow, "4": openrecall.SeverityInfo}
	return Sender{
		Name: "azure-monitor", Display: "Azure Monitor", Security: false, Episode: true,
		Match: func(v Value) bool {
			return v.Get("schemaId").String() == "azureMonitorCommonAlertSchema" && v.Path("data.essentials").IsObject()
		},
		Map: func(v Value) ([]Event, error) {
			return []Event{azureMonitorAlert(v)}, nil
		},
		Severity: scale.Map,
		Levels:   []string{"Sev0", "Sev1", "Sev2", "Sev3", "Sev4"},
		Doc: Doc{
			Point: "an action group with a Webhook action, URI http://HOST:9555/api/v1/alerts/azure-monitor?token=TOKEN, \"Enable the common alert schema\" on",
			Auth:  "?token=TOKEN in the webhook URI (a plain webhook action sets no header; the secure webhook uses Entra ID tokens)",
			Title: "essentials.alertRule on the target resource (configurationItems)", Severity: "essentials.severity (Sev0 critical … Sev4 info)",
			Service: "customProperties.service, else the target resource's name unless it is a VM or a computer (then the host)",
			Rule:    "essentials.alertRule", ID: "essentials.alertId (one alert instance per firing)",
			Source: "Microsoft Learn, Azure Monitor \"Common alert schema\" and \"Sample alert payloads\" (MicrosoftDocs/azure-monitor-docs, CC BY 4.0 / MIT); written for openrecall",
		},
	}
}

// azureHostTypes are the resource types whose resources are hosts: an alert
// on one names the machine, not the workload.
var azureHostTypes = []string{"microsoft.compute/virtualmachines", "microsoft.compute/virtualmachinescalesets",
	"microsoft.hybridcompute/machines", "microsoft.classiccompute/virtualmachines", "microsoft.operationalinsights/workspaces"}

// azureResource splits an Azure resource id into its type
// ("microsoft.web/sites") and name.
func azureResource(id string) (string, string) {
	parts := strings.Split(strings.Trim(strings.TrimSpace(id), "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if strings.EqualFold(parts[i], "providers") {
			rest := parts[i+1:]
			// namespace/type/name[/subtype/subname]...
			if len(rest) < 3 {
				return "", ""
			}
			typ := rest[0]
			name := ""
			for j := 1; j+1 < len(rest); j += 2 {
				typ += "/" + rest[j]
				name = rest[j+1]
			}
			return strings.ToLower(typ), name
		}
	}
	return "", ""
}

func azureIsHostType(typ string) bool {
	for _, h := range azureHostTypes {
		if typ == h || strings.HasPrefix(typ, h+"/") {
			return true
		}
	}
	return false
}

func azureMonitorAlert(v Value) Event {
	var e Event
	es := v.Path("data.essentials")
	ctx := v.Path("data.alertContext")
	rule := es.Get("alertRule").String()
	e.Set(PartRule, rule, "data.essentials.alertRule")
	e.Set(PartSeverity, es.Get("severity").String(), "data.essentials.severity")
	e.SetID("data.essentials.alertId", "az-", "", es.Get("alertId").String())
	cond := es.Get("monitorCondition").String()
	e.Status = Status(cond)
	if strings.EqualFold(cond, "Fired") {
		e.Status = openrecall.StatusFiring
	}
	e.Timestamp = es.Get("firedDateTime").Time()
	if e.Status == openrecall.StatusResolved {
		if t := es.Get("resolvedDateTime").Time(); !t.IsZero() {
			e.Timestamp = t
		}
	}

	// The resource the alert is about.
	targets := es.Get("alertTargetIDs").Strings()
	items := es.Get("configurationItems").Strings()
	typ, name := "", ""
	if len(targets) > 0 {
		typ, name = azureResource(targets[0])
	}
	if t := strings.ToLower(es.Get("targetResourceType").String()); typ == "" && t != "" {
		typ = t
	}
	item := ""
	if len(items) > 0 {
		item = items[0]
	}
	custom := v.Path("data.customProperties")
	if custom.IsNull() {
		custom = ctx.Get("properties")
	}
	for _, k := range custom.Keys() {
		val := Rendered(custom.Get(k).String())
		switch strings.ToLower(k) {
		case "service", "app", "application":
			if e.Service == "" {
				e.Set(PartService, val, "data.customProperties."+k)
			}
		case "env", "environment", "stage":
			e.Set(PartEnvironment, val, "data.customProperties."+k)
		}
		e.Label("property_"+k, val)
	}
	if azureIsHostType(typ) || (typ == "" && strings.EqualFold(es.Get("signalType").String(), "Log")) {
		e.Host = cloudWatchFirst(item, name)
		if strings.HasPrefix(typ, "microsoft.operationalinsights/workspaces") {
			e.Host = item // the computer sending the data, not the workspace
		}
	} else if e.Service == "" {
		switch {
		case name != "":
			e.Set(PartService, name, "data.essentials.alertTargetIDs")
		case item != "":
			e.Set(PartService, item, "data.essentials.configurationItems")
		}
	}
	title := rule
	if on := cloudWatchFirst(item, name); on != "" && title != "" {
		title += " on " + on
	}
	if title == "" {
		title = es.Get("description").String()
	}
	e.Set(PartTitle, title, "data.essentials.alertRule")

	e.Label("alert_rule_id", cloudWatchFirst(es.Get("alertRuleID").String(), es.Get("alertRuleId").String()))
	e.Label("signal_type", es.Get("signalType").String())
	e.Label("monitoring_service", es.Get("monitoringService").String())
	e.Label("resource_type", typ)
	e.Label("resource_group", es.Get("targetResourceGroup").String())
	e.Label("monitor_condition", cond)

	// Evidence: the condition that fired, by alert kind.
	var criteria []string
	var dims []string
	for _, c := range ctx.Path("condition.allOf").Elements() {
		parts := []string{}
		for _, k := range []string{"metricNamespace", "metricName", "webTestName", "searchQuery", "timeAggregation", "operator", "threshold", "metricValue"} {
			if s := c.Get(k).String(); s != "" {
				parts = append(parts, k+"="+s)
			}
		}
		criteria = append(criteria, strings.Join(parts, " "))
		for _, d := range c.Get("dimensions").Elements() {
			if n, val := d.Get("name").String(), d.Get("value").String(); n != "" && val != "" {
				dims = append(dims, n+"="+val)
			}
		}
	}
	for _, d := range ctx.Get("Dimensions").Elements() {
		if n, val := d.Get("name").String(), d.Get("value").String(); n != "" && val != "" {
			dims = append(dims, n+"="+val)
		}
	}
	e.Text = JoinText(Rendered(es.Get("description").String()), Evidence(
		[2]string{"condition", cond},
		[2]string{"signal", strings.TrimSpace(es.Get("signalType").String() + " " + es.Get("monitoringService").String())},
		[2]string{"criteria", strings.Join(criteria, "; ")},
		[2]string{"dimensions", strings.Join(dims, ", ")},
		[2]string{"search query", ctx.Get("SearchQuery").String()},
		[2]string{"result count", ctx.Get("ResultCount").String()},
		[2]string{"threshold", strings.TrimSpace(ctx.Get("Operator").String() + " " + ctx.Get("Threshold").String())},
		[2]string{"operation", ctx.Get("operationName").String()},
		[2]string{"caller", ctx.Get("caller").String()},
		[2]string{"activity status", ctx.Get("status").String()},
		[2]string{"window", strings.TrimSpace(ctx.Path("condition.windowStartTime").String() + " " + ctx.Path("condition.windowEndTime").String())},
		[2]string{"targets", strings.Join(targets, ", ")},
		[2]string{"configuration items", strings.Join(items, ", ")},
		[2]string{"fired", es.Get("firedDateTime").String()},
		[2]string{"resolved", es.Get("resolvedDateTime").String()},
	))
	return e
}

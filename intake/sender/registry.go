package sender

// All returns every sender, in detection order, in a new slice: the
// built-in senders intake's own reader reads first, then one adapter per
// sender. Detection tries the adapters in this order and the first whose
// Match holds reads the payload; every fixture is matched by its own
// sender alone, so the order decides nothing among them.
func All() []Sender {
	return []Sender{
		// Read by intake's own reader.
		alertmanager(), grafana(), prometheus(), pagerDuty(), openrecallObject(),
		// Envelopes.
		mapped("sns"),
		// Monitoring and incident senders.
		mapped("pagerduty-webhook"), mapped("opsgenie"), mapped("datadog"), mapped("newrelic"), mapped("cloudwatch"),
		mapped("azure-monitor"), mapped("google-cloud-monitoring"), mapped("sentry"), mapped("zabbix"), mapped("dynatrace"),
		mapped("splunk"), mapped("signalfx"), mapped("kibana"), mapped("graylog"), mapped("coralogix"), mapped("netdata"),
		mapped("uptime-kuma"), mapped("checkly"), mapped("site24x7"),
		// Security detection senders.
		mapped("falcosidekick"), mapped("wazuh"), mapped("elastic-security"), mapped("splunk-es"), mapped("suricata"), mapped("guardduty"),
		mapped("securityhub"), mapped("sentinel"), mapped("defender"), mapped("crowdstrike"), mapped("sentinelone"), mapped("datadog-signal"), mapped("secops"),
		mapped("panther"),
	}
}

// Lookup returns the built-in sender of a name (case-insensitive), and
// whether there is one. A process that loads mappings looks senders up in
// its Set.
func Lookup(name string) (Sender, bool) { return Set{}.Lookup(name) }

// Names returns every built-in sender's name, in All's order.
func Names() []string { return Set{}.Names() }

package sender

import "strings"

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
		sns(),
		// Monitoring and incident senders.
		pagerDutyWebhook(), opsgenie(), datadog(), newRelic(), cloudWatch(),
		azureMonitor(), googleCloudMonitoring(), sentry(), zabbix(), dynatrace(),
		splunk(), signalFx(), kibana(), graylog(), coralogix(), netdata(),
		uptimeKuma(), checkly(), site24x7(),
		// Security detection senders.
		falcosidekick(), wazuh(), elasticSecurity(), splunkES(), suricata(), guardDuty(),
		securityHub(), sentinel(), defender(), crowdStrike(), sentinelOne(), datadogSignal(), secOps(),
		panther(),
	}
}

// Lookup returns the sender of a name (case-insensitive), and whether
// there is one.
func Lookup(name string) (Sender, bool) {
	for _, s := range All() {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Sender{}, false
}

// Names returns every sender's name, in All's order.
func Names() []string {
	all := All()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}

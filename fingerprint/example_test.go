package fingerprint_test

import (
	"fmt"
	"strings"

	"github.com/openrecall/openrecall"
	"github.com/openrecall/openrecall/fingerprint"
)

func ExampleExtractor_Explain() {
	defaults, err := fingerprint.DefaultRules()
	if err != nil {
		panic(err)
	}
	// A user's rules file: one more alert name, and a team's own pattern.
	custom, err := fingerprint.LoadRules(strings.NewReader(`
fields:
  error_class:
    tables:
      - name: alertname
        values: {PaymentsWebhookBacklog: queue_backlog}
`), "team.yaml")
	if err != nil {
		panic(err)
	}
	e, err := fingerprint.New(defaults.Merge(custom))
	if err != nil {
		panic(err)
	}
	fp, evidence := e.Explain(openrecall.Alert{
		Title:  "Webhook backlog on payments-consumer-7d9f8c6b5-x2x9z",
		Text:   "41230 events pending for the last 20m",
		Labels: map[string]string{"alertname": "PaymentsWebhookBacklog", "cluster": "prod-eu-1", "container": "payments-consumer"},
	})
	fmt.Println(fp)
	for _, ev := range evidence {
		fmt.Printf("%s=%s by %s from %s\n", ev.Field, ev.Value, ev.Rule, ev.Source)
	}
	// Output:
	// error_class=queue_backlog;service_role=queue_consumer;dependency_pattern=;signal_shape=sustained;attack_pattern=;environment=prod
	// error_class=queue_backlog by table alertname[PaymentsWebhookBacklog] from label:alertname
	// service_role=queue_consumer by pattern suffix_consumer from label:container
	// signal_shape=sustained by pattern sustained from text
	// environment=prod by pattern name_prod from label:cluster
}

package sender

// pagerDutyWebhook is the PagerDuty webhooks v3 adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func pagerDutyWebhook() Sender {
	return Sender{Name: "pagerduty-webhook", Display: "PagerDuty webhooks v3", Security: false}
}

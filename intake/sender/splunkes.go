package sender

// splunkES is the Splunk ES notable events adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func splunkES() Sender {
	return Sender{Name: "splunk-es", Display: "Splunk ES notable events", Security: true}
}

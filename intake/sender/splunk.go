package sender

// splunk is the Splunk alert action adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func splunk() Sender {
	return Sender{Name: "splunk", Display: "Splunk alert action", Security: false}
}

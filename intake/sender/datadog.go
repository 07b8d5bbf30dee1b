package sender

// datadog is the Datadog adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func datadog() Sender {
	return Sender{Name: "datadog", Display: "Datadog", Security: false}
}

package sender

// signalFx is the Splunk Observability (SignalFx) adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func signalFx() Sender {
	return Sender{Name: "signalfx", Display: "Splunk Observability (SignalFx)", Security: false}
}

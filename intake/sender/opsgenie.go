package sender

// opsgenie is the Opsgenie adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func opsgenie() Sender {
	return Sender{Name: "opsgenie", Display: "Opsgenie", Security: false}
}

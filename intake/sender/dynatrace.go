package sender

// dynatrace is the Dynatrace adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func dynatrace() Sender {
	return Sender{Name: "dynatrace", Display: "Dynatrace", Security: false}
}

package sender

// checkly is the Checkly adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func checkly() Sender {
	return Sender{Name: "checkly", Display: "Checkly", Security: false}
}

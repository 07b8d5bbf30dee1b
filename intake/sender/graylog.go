package sender

// graylog is the Graylog adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func graylog() Sender {
	return Sender{Name: "graylog", Display: "Graylog", Security: false}
}

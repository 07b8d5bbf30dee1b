package sender

// netdata is the Netdata adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func netdata() Sender {
	return Sender{Name: "netdata", Display: "Netdata", Security: false}
}

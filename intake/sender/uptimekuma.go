package sender

// uptimeKuma is the Uptime Kuma adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func uptimeKuma() Sender {
	return Sender{Name: "uptime-kuma", Display: "Uptime Kuma", Security: false}
}

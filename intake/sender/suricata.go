package sender

// suricata is the Suricata EVE adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func suricata() Sender {
	return Sender{Name: "suricata", Display: "Suricata EVE", Security: true}
}

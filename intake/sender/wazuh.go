package sender

// wazuh is the Wazuh adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func wazuh() Sender {
	return Sender{Name: "wazuh", Display: "Wazuh", Security: true}
}

package sender

// elasticSecurity is the Elastic Security adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func elasticSecurity() Sender {
	return Sender{Name: "elastic-security", Display: "Elastic Security", Security: true}
}

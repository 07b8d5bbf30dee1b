package sender

// coralogix is the Coralogix adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func coralogix() Sender {
	return Sender{Name: "coralogix", Display: "Coralogix", Security: false}
}

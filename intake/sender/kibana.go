package sender

// kibana is the Elastic/Kibana rule action adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func kibana() Sender {
	return Sender{Name: "kibana", Display: "Elastic/Kibana rule action", Security: false}
}

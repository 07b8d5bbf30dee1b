package sender

// zabbix is the Zabbix adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func zabbix() Sender {
	return Sender{Name: "zabbix", Display: "Zabbix", Security: false}
}

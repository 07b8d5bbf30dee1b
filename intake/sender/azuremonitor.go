package sender

// azureMonitor is the Azure Monitor adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func azureMonitor() Sender {
	return Sender{Name: "azure-monitor", Display: "Azure Monitor", Security: false}
}

package sender

// googleCloudMonitoring is the Google Cloud Monitoring adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func googleCloudMonitoring() Sender {
	return Sender{Name: "google-cloud-monitoring", Display: "Google Cloud Monitoring", Security: false}
}

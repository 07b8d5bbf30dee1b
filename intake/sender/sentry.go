package sender

// sentry is the Sentry adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func sentry() Sender {
	return Sender{Name: "sentry", Display: "Sentry", Security: false}
}

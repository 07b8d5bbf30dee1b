package sender

// site24x7 is the Site24x7 adapter. PLACEHOLDER: not written yet; it matches
// nothing.
func site24x7() Sender {
	return Sender{Name: "site24x7", Display: "Site24x7", Security: false}
}
